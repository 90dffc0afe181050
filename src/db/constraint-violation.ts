/**
 * The one rule that turns a database constraint that fired into the 4xx it stands for (decisions
 * §12: never a 500). The contract's own validation normally refuses such input before anything is
 * written; this is the backstop for whatever reaches the database anyway (a rule the contract does
 * not state, a race between two writers). The REST error handler and the GraphQL error formatter
 * both ask it, so a constraint reads the same in both styles.
 */
import { ApiError, type ErrorCodeWithStatus } from '../errors.ts'

/**
 * SQLSTATEs of class 23 (integrity constraint violation), with the status and stable code each
 * answers with: a duplicate is the record's state (409), the others are a value the data cannot
 * hold (422).
 */
const VIOLATIONS: Record<string, { code: ErrorCodeWithStatus<409 | 422>; what: string }> = {
  '23505': { code: 'UNIQUE_VIOLATION', what: 'a record with the same key already exists' },
  '23514': { code: 'CHECK_VIOLATION', what: 'a value is outside what the data allows' },
  '23503': { code: 'REFERENCE_NOT_FOUND', what: 'a referenced record does not exist' },
  '23502': { code: 'MISSING_VALUE', what: 'a required value is missing' },
}

/**
 * PostgreSQL names a column constraint `<table>_<column>_<kind>` (`order_items_qty_check`,
 * `products_pkey`): the detail names the table and column so a client learns which value it was
 * without seeing SQL.
 */
function describeConstraint(constraint: string | undefined, table: string | undefined, column: string | undefined): string {
  if (table && column) return ` (${table}.${column})`
  if (!constraint) return table ? ` (${table})` : ''
  const named =
    table && constraint.startsWith(`${table}_`)
      ? constraint.slice(table.length + 1).replace(/_(check|key|fkey|pkey|not_null)$/, '')
      : undefined
  return named && named !== 'pkey' ? ` (${table}.${named})` : table ? ` (${table})` : ''
}

/** The ApiError for a constraint violation, or undefined when `error` is not one. */
export function constraintViolation(error: unknown): ApiError | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, constraint, table, column } = error as { code?: unknown; constraint?: unknown; table?: unknown; column?: unknown }
  const violation = typeof code === 'string' ? VIOLATIONS[code] : undefined
  if (!violation) return undefined
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined)
  const where = describeConstraint(text(constraint), text(table), text(column))
  return new ApiError(violation.code, `The change was refused: ${violation.what}${where}.`, { cause: error })
}
