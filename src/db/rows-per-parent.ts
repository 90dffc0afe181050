/**
 * "The first N rows of each parent" in one statement, whatever the number of parents: a lateral
 * join over the parent ids, each side an index range scan on (parent, sort key, id). GraphQL's
 * list fields on a parent (User.orders, Article.comments) are batched through here.
 */
import { type RawBuilder, sql } from 'kysely'
import type { Database } from './schema.ts'
import type { Executor } from './executor.ts'

/** Which rows of which parents: `limit` per parent, by (created_at, id) within it. */
interface PerParent {
  parentIds: readonly number[]
  /** The rows' order within a parent, the id as tie-breaker: oldest first, or newest first. */
  newestFirst: boolean
  limit: number
}

export interface RowsPerParentQuery<Table extends keyof Database> extends PerParent {
  table: Table
  /** The column that names the parent, e.g. orders.user_id. */
  parentColumn: keyof Database[Table] & string
}

/**
 * The statement of rows per parent, with a select list and joins of the caller's own over
 * `table` (an order read as the API shows it, with its owner): `columns` and `joins` may refer to
 * the table by its name. Its values are bound in this order: the parent ids, then the limit.
 */
export function rowsPerParent<Row>(
  query: PerParent & { table: keyof Database & string; parentColumn: string; columns: RawBuilder<unknown>; joins?: RawBuilder<unknown> },
): RawBuilder<Row> {
  const direction = sql.raw(query.newestFirst ? 'desc' : 'asc')
  const row = (column: string) => sql.ref(`${query.table}.${column}`)
  return sql<Row>`
    select r.* from unnest(${sql.val([...query.parentIds])}::int[]) as p(id)
    cross join lateral (
      select ${query.columns} from ${sql.table(query.table)} ${query.joins ?? sql``} where ${row(query.parentColumn)} = p.id
      order by ${row('created_at')} ${direction}, ${row('id')} ${direction} limit ${query.limit}
    ) r`
}

/** Up to `limit` rows of each parent, whole, ordered by (created_at, id) within it. */
export async function findRowsPerParent<Table extends keyof Database, Row>(db: Executor, query: RowsPerParentQuery<Table>): Promise<Row[]> {
  if (query.parentIds.length === 0) return []
  const result = await rowsPerParent<Row>({ ...query, columns: sql`${sql.table(query.table)}.*` }).execute(db)
  return result.rows
}
