/**
 * "The first N rows of each parent" in one statement, whatever the number of parents: a lateral
 * join over the parent ids, each side an index range scan on (parent, sort key, id). GraphQL's
 * list fields on a parent (User.orders, Article.comments) are batched through here.
 */
import { sql } from 'kysely'
import type { Database } from './schema.ts'
import type { Executor } from './executor.ts'

export interface RowsPerParentQuery<Table extends keyof Database> {
  table: Table
  /** The column that names the parent, e.g. orders.user_id. */
  parentColumn: keyof Database[Table] & string
  parentIds: readonly number[]
  /** The rows' order within a parent, the id as tie-breaker: oldest first, or newest first. */
  newestFirst: boolean
  limit: number
}

/** Up to `limit` rows of each parent, ordered by (created_at, id) within it. */
export async function findRowsPerParent<Table extends keyof Database, Row>(db: Executor, query: RowsPerParentQuery<Table>): Promise<Row[]> {
  if (query.parentIds.length === 0) return []
  const direction = sql.raw(query.newestFirst ? 'desc' : 'asc')
  const result = await sql<Row>`
    select r.* from unnest(${sql.val([...query.parentIds])}::int[]) as p(id)
    cross join lateral (
      select * from ${sql.table(query.table)} as t where ${sql.ref(`t.${query.parentColumn}`)} = p.id
      order by t.created_at ${direction}, t.id ${direction} limit ${query.limit}
    ) r`.execute(db)
  return result.rows
}
