/**
 * The one rule that tells "the database cannot serve right now" (503 DATABASE_UNAVAILABLE, retry
 * later) from "this request is wrong" (4xx) and "our code is wrong" (500). The REST error handler
 * and the GraphQL error formatter both ask it, so an outage reads the same in both styles.
 */

/**
 * Raised by the pool's checkouts (database.ts) when a unit of database work — a transaction, or a
 * read outside one — has not finished within DB_STATEMENT_TIMEOUT and its margin: the server
 * answered too slowly or not at all, and the connection is closed rather than reused.
 */
export class DatabaseDeadlineExceeded extends Error {
  constructor() {
    super('The database did not finish this work within DB_STATEMENT_TIMEOUT and its margin.')
    this.name = 'DatabaseDeadlineExceeded'
  }
}

/**
 * Raised when the server refused a prepared statement inside a transaction because a migration
 * changed the columns of its result (prepared-statements.ts): the transaction is lost, the
 * connection is closed, and a retry runs on a fresh one. Retry later, like an outage.
 */
export class PreparedStatementInvalidated extends Error {
  constructor(cause: unknown) {
    super('A migration changed a table under a prepared statement; the work was rolled back, retry it.', { cause })
    this.name = 'PreparedStatementInvalidated'
  }
}

/** Socket errors from connecting to or talking with the server (a lost or unreachable host). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * SQLSTATEs that describe the server's state, not the statement: 57P01 admin_shutdown (what
 * `pg_terminate_backend` and a fast or immediate stop send), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up or shutting down), 57014 query_canceled (statement_timeout: the
 * statement waited on a lock or a busy server past its budget), 53300 too_many_connections.
 * Class 08 (connection exception) is matched by prefix.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '53300'])

/** What the drivers say when they raise an error without a code. */
const DRIVER_MESSAGES = [
  // pg: the socket closed under a query, or pg-pool's connect timeout cut a connection attempt.
  /^Connection terminated( unexpectedly| due to connection timeout)?$/,
  // pg: the client's own connect timeout.
  /^timeout expired$/,
  // pg-pool: no pooled client became free within connectionTimeoutMillis.
  /^timeout exceeded when trying to connect$/,
  // pg: a query sent to a client whose connection already died.
  /^Client (has encountered a connection error|was closed) and is not queryable$/,
  // pg-pool and Kysely: the pool is shutting down, or a connection whose rollback failed was dropped.
  /^Cannot use a pool after calling end on the pool$/,
  /^Postgres connection has been discarded$/,
  // PGlite, and Kysely on a closed PGlite: the embedded database was closed (the instance is
  // shutting down).
  /^PGlite is closed$/,
  /^PGlite instance is already closed\.$/,
]

/** SQLSTATEs with which the server ends the session itself: the connection is gone after them. */
const SESSION_ENDED = new Set(['57P01', '57P02', '57P03'])

/** A code that says the connection is gone: a socket error, the session ended, or class 08 (connection exception). */
function isLostConnectionCode(code: string): boolean {
  return NETWORK_CODES.has(code) || SESSION_ENDED.has(code) || /^08[0-9A-Z]{3}$/.test(code)
}

/**
 * What a pooled connection cannot be used again after: the server ended its session, or the socket
 * failed or closed. A statement timeout (57014) or any other error leaves the connection usable.
 */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') return isLostConnectionCode(code)
  const message = error instanceof Error ? error.message : ''
  return /^Connection terminated/.test(message) || /^Client (has encountered a connection error|was closed)/.test(message)
}

function isUnavailableItself(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  if (error instanceof DatabaseDeadlineExceeded || error instanceof PreparedStatementInvalidated) return true
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') return isLostConnectionCode(code) || SQLSTATES.has(code)
  // Only an error without a code is read by its message: ours (ApiError) and the server's carry one.
  const message = error instanceof Error ? error.message : undefined
  return message !== undefined && DRIVER_MESSAGES.some((pattern) => pattern.test(message))
}

/**
 * True when `error` — or its cause, or any error it aggregates (Node reports a refused connection
 * to every address of a host as one AggregateError) — means the database is unreachable, the
 * connection died, or the server cancelled the statement on a timeout.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false
  if (isUnavailableItself(error)) return true
  const { cause, errors } = error as { cause?: unknown; errors?: unknown }
  if (cause !== undefined && isDatabaseUnavailable(cause, depth + 1)) return true
  return Array.isArray(errors) && errors.length > 0 && errors.every((inner) => isDatabaseUnavailable(inner, depth + 1))
}
