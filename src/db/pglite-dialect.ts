/**
 * A Kysely dialect over an embedded PGlite: PostgreSQL's adapter, compiler and introspector, and a
 * driver with one connection. Written while Node 20 held the project on Kysely 0.28, which has
 * none. Kysely 0.29, in use since Node 20 was dropped, ships one of its own; this
 * one stays for now (the same design, proven by the suite; it also applies a transaction's isolation
 * level and access mode, which Kysely's ignores): replacing it is a change of its own.
 *
 * PGlite is one session. The driver hands its one connection to one user at a time (a mutex held
 * from acquire to release, since the PostgreSQL adapter tells Kysely it may open several), and runs a
 * transaction inside `pglite.transaction`, PGlite's exclusive lock, so that another Kysely on the
 * same PGlite (the events reader) or a direct `pglite.query` waits instead of slipping statements
 * into it. Streaming is not used by this project and not supported.
 */
import type { PGlite, Transaction } from '@electric-sql/pglite'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'

/** One waiter at a time, in arrival order. */
class Mutex {
  #tail: Promise<void> = Promise.resolve()

  async lock(): Promise<() => void> {
    let unlock!: () => void
    const previous = this.#tail
    this.#tail = new Promise<void>((resolve) => (unlock = resolve))
    await previous
    return unlock
  }
}

class PGliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite
  /** The open transaction, and how to end it: resolving commits, rejecting rolls back. */
  #transaction: { tx: Transaction; end: (commit: boolean) => void; closed: Promise<void> } | undefined

  constructor(pglite: PGlite) {
    this.#pglite = pglite
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const target = this.#transaction?.tx ?? this.#pglite
    const { affectedRows, rows } = await target.query<R>(compiledQuery.sql, [...compiledQuery.parameters], { rowMode: 'object' })
    return { numAffectedRows: affectedRows == null ? undefined : BigInt(affectedRows), rows: rows ?? [] }
  }

  // biome-ignore lint/correctness/useYield: Kysely's driver interface asks for an async generator; PGlite cannot stream.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not supported on PGlite.')
  }

  async begin(settings: TransactionSettings): Promise<void> {
    let begun!: (tx: Transaction) => void
    const started = new Promise<Transaction>((resolve) => (begun = resolve))
    let end!: (commit: boolean) => void
    const ended = new Promise<boolean>((resolve) => (end = resolve))
    const closed = this.#pglite.transaction(async (tx) => {
      begun(tx)
      // PGlite commits when this callback returns and rolls back when it throws.
      if (!(await ended)) await tx.rollback()
    })
    // A failure to begin at all surfaces here rather than as an unhandled rejection.
    const tx = await Promise.race([started, closed.then(() => Promise.reject(new Error('PGlite transaction ended before it began')))])
    this.#transaction = { tx, end, closed }
    if (settings.isolationLevel || settings.accessMode) {
      const modes = [settings.isolationLevel ? `isolation level ${settings.isolationLevel}` : '', settings.accessMode ?? '']
        .filter(Boolean)
        .join(' ')
      await tx.query(`set transaction ${modes}`)
    }
  }

  async finish(commit: boolean): Promise<void> {
    const transaction = this.#transaction
    this.#transaction = undefined
    if (!transaction) return
    transaction.end(commit)
    if (commit) await transaction.closed
    else await transaction.closed.catch(() => {})
  }
}

class PGliteDriver implements Driver {
  readonly #pglite: PGlite
  readonly #mutex = new Mutex()
  readonly #connection: PGliteConnection
  #unlock: (() => void) | undefined

  constructor(pglite: PGlite) {
    this.#pglite = pglite
    this.#connection = new PGliteConnection(pglite)
  }

  async init(): Promise<void> {
    await this.#pglite.waitReady
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const unlock = await this.#mutex.lock()
    this.#unlock = unlock
    return this.#connection
  }

  async releaseConnection(): Promise<void> {
    const unlock = this.#unlock
    this.#unlock = undefined
    unlock?.()
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (connection as PGliteConnection).begin(settings)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).finish(true)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).finish(false)
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoted(name)}`))
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${quoted(name)}`))
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${quoted(name)}`))
  }

  /** Closes the PGlite, as Kysely 0.29's dialect does; a Kysely that shares it must not be destroyed. */
  async destroy(): Promise<void> {
    if (!this.#pglite.closed) await this.#pglite.close()
  }
}

const quoted = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`

export class PGliteDialect implements Dialect {
  readonly #pglite: PGlite

  constructor(config: { pglite: PGlite }) {
    this.#pglite = config.pglite
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter()
  }

  createDriver(): Driver {
    return new PGliteDriver(this.#pglite)
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }
}
