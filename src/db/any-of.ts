/**
 * The right side of `column = any($1)`: the values as one array parameter, not an IN list, so a
 * statement's text is the same whatever the number of values (one plan in pg_stat_statements, one
 * parameter however many parents a batch has).
 */
import { type RawBuilder, sql } from 'kysely'

export function anyInteger(values: Iterable<number>): RawBuilder<number> {
  return sql<number>`any(${sql.val([...values])}::int[])`
}

/** Duplicates are dropped: the statement reads each text once. */
export function anyText(values: Iterable<string>): RawBuilder<string> {
  return sql<string>`any(${sql.val([...new Set(values)])}::text[])`
}
