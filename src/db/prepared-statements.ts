/**
 * Named (prepared) statements on a direct PostgreSQL connection (decisions §13, "Production
 * topology"). An unnamed statement is parsed, analysed and planned by the server every time it
 * runs; for the API's reads (an order with its items as JSON, a user with its recent orders) that
 * is about half the server's work per statement. A named one is parsed once per connection and
 * its plan cached, so each later run only binds and executes.
 *
 * Only on a direct connection: behind a pooler in transaction mode (PgBouncer 1.18, its defaults)
 * a statement prepared on one server session is unknown on the next, so the pooled mode names
 * nothing. PGlite runs in this process and gains nothing from a name.
 *
 * The one risk a cached plan brings: a statement whose result is `*` (`returning *`) fails with
 * "cached plan must not change result type" once a migration — another instance's, during a
 * rolling deploy — changes the columns behind it. Such a failure marks every connection prepared
 * before it for closing (`invalidate`): a read outside a transaction is run again at once, unnamed,
 * and answers; a statement in a transaction has aborted it, and the write answers 503 with
 * Retry-After (PreparedStatementInvalidated), which its retry finds on a fresh connection.
 */
import type pg from 'pg'

/**
 * How many distinct statement texts get a name. The API's statements are a fixed set but for the
 * lists whose text varies with their input (`in (…)` of several lengths); past the cap a new text
 * runs unnamed, so a server session never holds an unbounded number of plans.
 */
const MAX_NAMED_STATEMENTS = 1000

/** The server's words when a prepared statement's result columns changed under it (SQLSTATE 0A000). */
const RESULT_TYPE_CHANGED = 'cached plan must not change result type'

export function isChangedResultType(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === '0A000' &&
    error instanceof Error &&
    error.message.includes(RESULT_TYPE_CHANGED)
  )
}

/**
 * The names of one pool's statements: the same text always has the same name, on every connection
 * of the pool (pg prepares it on a connection the first time it runs there). A generation counts
 * invalidations: a connection first checked out before the last one is closed rather than used.
 */
export class PreparedStatements {
  readonly #names = new Map<string, string>()
  #generation = 0
  readonly #generationOf = new WeakMap<pg.PoolClient, number>()

  /** The statement to send for `text`: named while the cap allows, plain otherwise. */
  config(text: string, values: unknown[]): pg.QueryConfig {
    let name = this.#names.get(text)
    if (name === undefined && this.#names.size < MAX_NAMED_STATEMENTS) {
      name = `api_${this.#names.size}`
      this.#names.set(text, name)
    }
    return name === undefined ? { text, values } : { name, text, values }
  }

  /** Every connection prepared until now holds plans the server may refuse: none is used again. */
  invalidate(): void {
    this.#generation++
  }

  /** True for a connection prepared before the last invalidation (its plans may be stale). */
  isStale(client: pg.PoolClient): boolean {
    const generation = this.#generationOf.get(client)
    if (generation === undefined) {
      this.#generationOf.set(client, this.#generation)
      return false
    }
    return generation < this.#generation
  }
}
