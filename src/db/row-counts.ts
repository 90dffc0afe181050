/**
 * Exact totals read from `row_counts` (migration 0009, decisions §17): PostgreSQL keeps the number
 * of rows of each counted table there, per owner and status, in the transaction that changes them,
 * so a total is a sum over a few rows of one index range, whatever the size of the table, and
 * it is as exact as a count(*) in the same snapshot.
 */
import { type Expression, type RawBuilder, sql } from 'kysely'
import type { Executor } from './executor.ts'

/** The tables whose rows are counted (migration 0009's triggers). */
export type CountedTable = 'orders' | 'users' | 'articles' | 'products' | 'webhook_endpoints'

/** Which rows a total counts: those of one owner (0 or absent: every owner's), of one status (orders). */
export interface CountedFilter {
  ownerId?: number | undefined
  status?: string | undefined
}

/** The number of `table`'s rows the filter names, as a scalar subquery (a bigint). */
export function countedRows(table: CountedTable, filter: CountedFilter = {}): RawBuilder<number | string | bigint> {
  const status = filter.status === undefined ? sql`` : sql` and status = ${filter.status}`
  return sql<number | string | bigint>`(select coalesce(sum(n), 0)::bigint from row_counts
    where counted = ${table} and owner_id = ${filter.ownerId ?? 0}${status})`
}

/** The values countedRows binds, in its order (for statements compiled once per shape). */
export function countedRowsValues(table: CountedTable, filter: CountedFilter = {}): unknown[] {
  return [table, filter.ownerId ?? 0, ...(filter.status === undefined ? [] : [filter.status])]
}

/**
 * A page and its total in one statement, so both are read in one snapshot: `list_total` beside
 * every row of `page`, and one row with a null page when the page is empty (a cursor past the last row
 * still learns the total). The total is the outer side of a join with no join clause, which
 * PostgreSQL can only run as a nested loop: one outer row, the page's rows in the page's order.
 */
export function pageWithTotal<Row>(total: RawBuilder<number | string | bigint>, page: Expression<Row>): RawBuilder<PageRow<Row>> {
  return sql<PageRow<Row>>`select counted.list_total, page.* from (select ${total} as list_total) as counted
    left join lateral (${page}) as page on true`
}

/** A row of pageWithTotal: the page's columns (all null in the one row of an empty page) and the total. */
export type PageRow<Row> = { [Column in keyof Row]: Row[Column] | null } & { list_total: number | string | bigint }

/** The rows and the total of a pageWithTotal statement's result. */
export function rowsAndTotal<Row, Key extends keyof Row>(rows: ReadonlyArray<PageRow<Row>>, key: Key): { rows: Row[]; total: number } {
  const total = Number(rows[0]?.list_total ?? 0)
  // Every row but an empty page's one has its key: the page's columns are then the page's row.
  return { rows: rows.filter((row) => row[key] !== null) as Row[], total }
}

/**
 * Runs a page's statement, with the total of `counted` in the same statement when one is given
 * (pageWithTotal): its rows (`key` tells a page's row from an empty page's), and the total or
 * undefined.
 */
export async function readPage<Row, Key extends keyof Row>(
  db: Executor,
  page: Expression<Row>,
  key: Key,
  counted: RawBuilder<number | string | bigint> | undefined,
): Promise<{ rows: Row[]; total: number | undefined }> {
  if (!counted) return { rows: (await sql<Row>`${page}`.execute(db)).rows, total: undefined }
  return rowsAndTotal((await pageWithTotal(counted, page).execute(db)).rows, key)
}
