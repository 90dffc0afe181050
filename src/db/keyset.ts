/**
 * Keyset pagination, the one way lists page here: rows strictly after the last one returned, in
 * the list's order, with the id as tie-breaker. `(sort_key, id) < ($1, $2)` lets PostgreSQL walk
 * a (…, sort_key, id) index in either direction without a sort step.
 */
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely'

export interface KeysetSort<Field extends string> {
  field: Field | 'id'
  descending: boolean
}

/** The WHERE condition "after this position" for a sort. */
export function afterPosition<Field extends string>(sort: KeysetSort<Field>, after: [string | number, number]): RawBuilder<boolean> {
  const comparator = sql.raw(sort.descending ? '<' : '>')
  const [value, id] = after
  return sort.field === 'id'
    ? sql<boolean>`id ${comparator} ${id}`
    : sql<boolean>`(${sql.ref(sort.field)}, id) ${comparator} (${value}, ${id})`
}

/** The ORDER BY columns of a sort, id last as the tie-breaker. */
export function orderColumns<Field extends string>(sort: KeysetSort<Field>): Array<[Field | 'id', 'asc' | 'desc']> {
  const direction = sort.descending ? 'desc' : 'asc'
  return sort.field === 'id'
    ? [['id', direction]]
    : [
        [sort.field, direction],
        ['id', direction],
      ]
}

/**
 * One keyset page of a select: the rows after `after` in the sort's order, limit + 1 of them, so
 * that the caller knows whether another page follows.
 */
export function keysetPage<DB, TB extends keyof DB, O, Field extends string>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: { sort: KeysetSort<Field>; after: [string | number, number] | undefined; limit: number },
): SelectQueryBuilder<DB, TB, O> {
  let q = page.after ? query.where(afterPosition(page.sort, page.after)) : query
  for (const [column, direction] of orderColumns(page.sort)) q = q.orderBy(sql.ref(column), direction)
  return q.limit(page.limit + 1)
}

/**
 * The keyset clause of a list in the ascending order of one unique column (a primary key, a
 * product's sku), which needs no tie-breaker: the rows after `after` when given, limit + 1 of
 * them. For a statement with no other condition: it writes the WHERE.
 */
export function pageByUniqueColumn(column: string, page: { after: string | number | undefined; limit: number }): RawBuilder<unknown> {
  const key = sql.ref(column)
  const after = page.after === undefined ? sql`` : sql`where ${key} > ${page.after}`
  return sql`${after} order by ${key} limit ${page.limit + 1}`
}
