/**
 * A timestamp as the API writes it (decisions §3: ISO 8601 in UTC with milliseconds and `Z`, what
 * `Date#toISOString` gives), formatted by PostgreSQL, so that a record built as JSON in a statement
 * needs no parsing into a `Date` and formatting again in JavaScript. The columns hold milliseconds
 * (timestamptz(3)), so nothing is cut; the two differ only for years past 9999, which
 * `toISOString` writes with a sign.
 */
import { type Expression, type RawBuilder, sql } from 'kysely'

export function isoTimestamp(timestamp: Expression<Date>): RawBuilder<string> {
  return sql<string>`to_char(${timestamp} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
}
