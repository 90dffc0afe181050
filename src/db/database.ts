import { PGlite } from '@electric-sql/pglite'
import {
  Kysely,
  sql,
  type CompiledQuery,
  PostgresAdapter,
  PostgresDialect,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Dialect,
  type Driver,
  type LogEvent,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely'
import { Migrator } from 'kysely/migration'
import type { RunStatement } from './compiled-statement.ts'
import { PGliteDialect } from './pglite-dialect.ts'
import { ExactTextPGlite } from './exact-text-pglite.ts'
import pg from 'pg'
import { mkdir } from 'node:fs/promises'
import { DatabaseDeadlineExceeded, isConnectionLost, PreparedStatementInvalidated } from './database-unavailable.ts'
import { CLOSE_WAIT_MS, endClient } from './end-client.ts'
import { migrations } from './migrations/index.ts'
import { isChangedResultType, PreparedStatements } from './prepared-statements.ts'
import type { Database } from './schema.ts'

export type DatabaseKind = 'postgres' | 'pglite'

export interface DatabaseOptions {
  /** `postgres://…` for PostgreSQL through a pg pool, `memory://` for an in-memory PGlite. */
  url?: string | undefined
  /** Where an on-disk PGlite keeps its files when `url` is not set. */
  dataDir?: string
  /** A PGlite data directory dump to start from (tests load a migrated template this way). */
  pgliteTemplate?: Blob
  /** Called for every statement Kysely runs: tests count statements with it. */
  onQuery?: (event: LogEvent) => void
  poolSize?: number
  /**
   * PostgreSQL: longest a statement may run, in ms (`DB_STATEMENT_TIMEOUT`, 5 s by default), and
   * with `databaseWorkBoundMs` the longest a whole transaction (or a read outside one) may take;
   * 0 for no limit (migrations, which may rightly run longer).
   */
  statementTimeoutMs?: number
  /** PostgreSQL: longest to wait for a connection, new or pooled (2 s by default). */
  connectTimeoutMs?: number
  /**
   * PostgreSQL: `true` behind a pooler in transaction mode (PgBouncer), `false` for a direct
   * connection, undefined to find out at creation (DB_POOLED; see connectionMode).
   */
  pooled?: boolean | undefined
  /** Where a lost connection is reported (the app's logger); a line on stderr otherwise. */
  logger?: DatabaseLogger
}

export interface DatabaseLogger {
  warn(object: { err: unknown }, message: string): void
  /** Where the connection mode is named, once per pool; not reported without it. */
  info?(object: { pooled: boolean }, message: string): void
}

export interface DatabaseHandle {
  db: Kysely<Database>
  kind: DatabaseKind
  /** The PostgreSQL URL, so that another instance can open its own pool on the same database. */
  url: string | undefined
  /**
   * The same connections as `db`, bounded the same way, but not observed: background work (event
   * delivery) that is no request's. Never destroyed: `close` ends the connections both share.
   */
  background: Kysely<Database>
  /**
   * Whether the pool works as behind a pooler in transaction mode: no startup parameters, the
   * statement timeout set per unit of work, no session state (decisions §13). False on PGlite.
   */
  pooled: boolean
  /** The pool when running on PostgreSQL (LISTEN/NOTIFY needs its own client). */
  pool: pg.Pool | undefined
  pglite: PGlite | undefined
  /**
   * Calls `listener` for every statement run through `db`, after it ran (an app counts, times and
   * traces statements per request this way, on pg and PGlite alike); returns its removal.
   */
  observeQueries(listener: (event: LogEvent) => void): () => void
  /** PostgreSQL: how many times a request gave up waiting for a connection (metrics); 0 on PGlite. */
  connectTimeouts(): number
  /**
   * PostgreSQL: a Kysely driver on this pool (its deadline, prepared statements and timeouts), and
   * a Kysely that runs through another driver with this handle's statement log: what read routing
   * is built from (read-routing.ts). Undefined on PGlite, which has no replicas.
   */
  drivers: { driver(): Driver; through(driver: Driver): Kysely<Database> } | undefined
  /**
   * PostgreSQL: runs one compiled statement on `db`'s pool outside any transaction, below Kysely's
   * executor: one checkout (its deadline, prepared name and pooled timeout, as any unit of work
   * has) and one driver call, written to the statement log like every other (decisions §19).
   * Undefined on PGlite, whose statements go through Kysely.
   */
  runStatement: RunStatement | undefined
  close(): Promise<void>
}

const INT8_OID = 20
// PGlite's typings leave out the static defaultStartParams its class carries at run time.
const PGLITE_DEFAULT_START_PARAMS: string[] = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams

// bigint columns (order totals, counts) stay below 2^53, so numbers are exact and keep the API's
// integer type; the default would hand back strings (pg) or bigint (PGlite).
const parseInt8 = (value: string): number => Number(value)

export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000
/** The startup parameter a pool without a statement timeout probes for a pooler with (any value but 0 tells). */
const PROBE_TIMEOUT_MS = 3_600_000
export const DEFAULT_CONNECT_TIMEOUT_MS = 2000
/**
 * How much longer than statement_timeout one unit of database work may take as a whole: its wait
 * for a connection and the round trips around its statements. Past it the work is given up on,
 * which is also the bound for a server that answers nothing at all.
 */
const DEADLINE_MARGIN_MS = 1000

/**
 * The longest one unit of database work — a transaction from asking for a connection to its
 * COMMIT, or a read outside one — runs before it fails with DatabaseDeadlineExceeded (503), and so
 * the longest any request waits on the database at once (decisions §12).
 */
export function databaseWorkBoundMs(statementTimeoutMs: number): number {
  return statementTimeoutMs + DEADLINE_MARGIN_MS
}

const stderrLogger: DatabaseLogger = {
  warn: ({ err }, message) => console.warn(`${message}: ${err instanceof Error ? err.message : String(err)}`),
}

export async function createDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const { log, observeQueries } = statementLog(options.onQuery)
  const url = options.url
  if (url?.startsWith('postgres:') || url?.startsWith('postgresql:')) {
    const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS
    const budgetMs = statementTimeoutMs > 0 ? databaseWorkBoundMs(statementTimeoutMs) : Number.POSITIVE_INFINITY
    const logger = options.logger ?? stderrLogger
    const connectTimeoutMs = Math.min(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, budgetMs)
    // Found out with or without a statement timeout (a pool for migrations has none): behind a
    // pooler no statement may be prepared either.
    const pooled =
      options.pooled ?? (await behindPooler(url, statementTimeoutMs > 0 ? statementTimeoutMs : PROBE_TIMEOUT_MS, connectTimeoutMs))
    if (statementTimeoutMs > 0)
      logger.info?.(
        { pooled },
        pooled
          ? 'database connections are pooled (transaction mode): the statement timeout is set per transaction'
          : 'database connections are direct: the statement timeout is a session setting',
      )
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      // Bounds opening a connection and also waiting for a free pooled one: a request that cannot
      // get a connection within it fails (503) instead of queueing without end. It is part of the
      // unit of work's budget, so never longer than the budget.
      connectionTimeoutMillis: connectTimeoutMs,
      // Direct, the server cancels a statement past this (57014), releasing the locks it holds,
      // and a unit of work costs nothing more: a read is one statement. Pooled, no startup
      // parameters: a pooler in transaction mode (PgBouncer's defaults) refuses them, and would
      // hand one session's settings to others. The timeout travels with each unit of work instead
      // (CheckedOutConnection), and pipelining lets a read outside a transaction send its BEGIN,
      // the read and its COMMIT in one round trip.
      ...(pooled ? { pipeline: true } : statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    })
    // When a connection dies (server restart, pg_terminate_backend, network cut), pg emits 'error'
    // on its client. pg-pool listens only while the client is idle; an 'error' with no listener
    // ends the process, and a client in a query or a transaction has none. So every client gets a
    // listener of its own for its whole life: the query in flight fails with the error (the
    // request answers 503), the pool drops the dead client when it is released, and the next
    // checkout opens a fresh connection. Recovery needs nothing more. Every open connection is
    // also kept, so that closing can cut those a frozen server never sees off.
    const open = new Set<pg.PoolClient>()
    pool.on('connect', (client) => {
      client.on('error', (error) => logger.warn({ err: error }, 'database connection lost'))
      open.add(client)
      client.once('end', () => open.delete(client))
    })
    // pg-pool re-emits an idle client's error on the pool, which needs a listener too; the
    // client's own listener has already reported it.
    pool.on('error', () => {})
    let connectTimeouts = 0
    // Direct, statements are prepared (named) per connection; behind a pooler they cannot be.
    const prepared = pooled ? undefined : new PreparedStatements()
    const checkouts = boundedCheckouts(pool, budgetMs, pooled ? statementTimeoutMs : 0, prepared, () => void connectTimeouts++)
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: checkouts }), log })
    return {
      db,
      background: new Kysely<Database>({ dialect: new PostgresDialect({ pool: checkouts }) }),
      kind: 'postgres',
      url,
      pooled,
      pool,
      pglite: undefined,
      observeQueries,
      connectTimeouts: () => connectTimeouts,
      drivers: {
        driver: () => new PostgresDialect({ pool: checkouts }).createDriver(),
        through: (driver) => new Kysely<Database>({ dialect: dialectThrough(driver), log }),
      },
      runStatement: statementRunner(checkouts, log),
      close: async () => {
        // Ends the pool once every checkout is released, each within its budget…
        await db.destroy()
        // …if `db` ever ran a statement: with replicas every statement goes through `drivers`
        // (read-routing.ts), so the pool is ended here too, and nothing can check out from it again.
        const ending = pool.ending ? undefined : pool.end()
        // The connections it ended are seen off, or cut when the server does not answer.
        await Promise.all([...open].map((client) => endClient(client, CLOSE_WAIT_MS)))
        await ending
      },
    }
  }

  // No statement timeout on PGlite: it is one session inside this process, so no other session can
  // hold a lock it waits for, and its WebAssembly backend has no timer signal to cancel a statement
  // with (it accepts `SET statement_timeout` and ignores it).
  const inMemory = url?.startsWith('memory:') || options.pgliteTemplate !== undefined
  const dataDir = inMemory ? undefined : (options.dataDir ?? './data')
  if (dataDir) await mkdir(dataDir, { recursive: true })
  // PGlite itself, but for text read back exactly (exact-text-pglite.ts).
  const pglite = new ExactTextPGlite({
    ...(dataDir ? { dataDir } : {}),
    ...(options.pgliteTemplate ? { loadDataDir: options.pgliteTemplate } : {}),
    parsers: { [INT8_OID]: parseInt8 },
    // PostgreSQL arms a 10 s startup-progress timer that PGlite never disarms; left on, that
    // timer keeps a closed PGlite's process alive.
    // In memory, every file is in this process's memory already: PostgreSQL's 128 MB of shared
    // buffers would copy it again, and zeroing them costs about half a second of CPU per start
    // (a test database is one such start).
    startParams: [
      ...PGLITE_DEFAULT_START_PARAMS,
      '-c',
      'log_startup_progress_interval=0',
      ...(inMemory ? ['-c', 'shared_buffers=16MB'] : []),
    ],
  })
  await pglite.waitReady
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }), log })
  return {
    db,
    background: new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) }),
    kind: 'pglite',
    url: undefined,
    pooled: false,
    pool: undefined,
    pglite,
    observeQueries,
    connectTimeouts: () => 0,
    drivers: undefined,
    runStatement: undefined,
    close: () => db.destroy(),
  }
}

/**
 * Whether `url` leads to a pooler in transaction mode rather than to PostgreSQL itself, found once
 * per pool with one connection that asks for the statement timeout as a startup parameter:
 * PgBouncer refuses it (08P01 "unsupported startup parameter"), or, told to ignore it
 * (ignore_startup_parameters), connects without it. A server that cannot be reached now counts as
 * direct: the start fails on the migration anyway, and a test that opens a pool to a closed port
 * sees its queries fail as they would.
 */
async function behindPooler(url: string, statementTimeoutMs: number, connectTimeoutMs: number): Promise<boolean> {
  const probe = new pg.Client({ connectionString: url, statement_timeout: statementTimeoutMs, connectionTimeoutMillis: connectTimeoutMs })
  // A connection lost while probing fails the calls below; without a listener it would end the process.
  probe.on('error', () => {})
  try {
    await probe.connect()
  } catch (error) {
    return (error as { code?: unknown }).code === '08P01' && /unsupported startup parameter/i.test(String((error as Error).message))
  }
  try {
    // pg_settings gives the value in ms, whatever unit SHOW would print it in.
    const { rows } = await probe.query<{ setting: string }>(`select setting from pg_settings where name = 'statement_timeout'`)
    return Number(rows[0]?.setting) !== Math.trunc(statementTimeoutMs)
  } catch {
    return false
  } finally {
    await probe.end().catch(() => {})
  }
}

/**
 * Kysely's log hook, fanned out: the `onQuery` given at creation (tests count statements with it)
 * and the listeners added later through `observeQueries`. Kysely times each statement for it.
 */
/** PostgreSQL's dialect with another driver (read-routing.ts). */
function dialectThrough(driver: Driver): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => driver,
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  }
}

function statementLog(onQuery: ((event: LogEvent) => void) | undefined) {
  const listeners = new Set<(event: LogEvent) => void>()
  if (onQuery) listeners.add(onQuery)
  return {
    log(event: LogEvent): void {
      for (const listener of listeners) listener(event)
    },
    observeQueries(listener: (event: LogEvent) => void): () => void {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
  }
}

/**
 * What Kysely does for a statement outside a transaction (check a connection out, run, log, release)
 * without its executor, connection provider and driver wrappers around the checkout: a fixed read
 * on a hot path pays for one checkout and one call (decisions §19). Timed and logged as Kysely
 * times and logs, from the call to the answer, so the statement log's listeners (metrics, traces,
 * a request's statement count) see it as any other.
 */
function statementRunner(checkouts: PostgresPool, log: (event: LogEvent) => void): RunStatement {
  return async <Row>(query: CompiledQuery): Promise<Row[]> => {
    const connection = await checkouts.connect()
    const start = performance.now()
    try {
      const { rows } = await connection.query<Row>(query.sql, query.parameters)
      log({ level: 'query', query, queryDurationMillis: performance.now() - start })
      return rows
    } catch (error) {
      log({ level: 'error', error, query, queryDurationMillis: performance.now() - start })
      throw error
    } finally {
      connection.release()
    }
  }
}

/** pg-pool's and pg's words for "no connection within connectionTimeoutMillis". */
const CONNECT_TIMEOUT_MESSAGES = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'timeout expired',
])

/**
 * The pool as Kysely sees it, with a deadline on every checkout (decisions §12). One checkout is
 * one unit of database work: a transaction (BEGIN, an idempotency key's claim, the work, in a
 * savepoint when it may refuse after writing, the stored outcome, COMMIT) or a read outside one. From asking for a connection to
 * releasing it, the unit has `budgetMs` (DB_STATEMENT_TIMEOUT and a margin) however many
 * statements it runs; the server's statement_timeout still cancels any one statement sooner,
 * releasing its locks and keeping the connection. Behind a pooler in transaction mode
 * (`statementTimeoutMs` > 0 here) the timeout is handed to the server with each unit (`SET LOCAL
 * statement_timeout`), never as a session setting: a session is not ours there, and a startup
 * parameter is refused (decisions §13). Direct (0 here), the session's own setting does it.
 */
function boundedCheckouts(
  pool: pg.Pool,
  budgetMs: number,
  statementTimeoutMs: number,
  prepared: PreparedStatements | undefined,
  onConnectTimeout: () => void,
): PostgresPool {
  // An integer from the configuration, never from a request: safe to write into the SQL text.
  const setTimeout = statementTimeoutMs > 0 ? `set local statement_timeout = ${Math.trunc(statementTimeoutMs)}` : undefined
  return {
    async connect(): Promise<PostgresPoolClient> {
      const deadline = performance.now() + budgetMs
      const connect = () =>
        pool.connect().catch((error: unknown) => {
          if (error instanceof Error && CONNECT_TIMEOUT_MESSAGES.has(error.message)) onConnectTimeout()
          throw error
        })
      let client = await connect()
      // A connection whose prepared plans a migration may have outdated is closed, not used.
      while (prepared?.isStale(client)) {
        client.release(true)
        client = await connect()
      }
      return new CheckedOutConnection(client, deadline, setTimeout, prepared)
    },
    end: () => pool.end(),
    options: pool.options,
  }
}

/** What Kysely reads of a result with no rows that changed none. */
const NOTHING_RUN: PostgresQueryResult<never> = { command: 'SELECT', rowCount: 0, rows: [] }

/** How Kysely opens a transaction (`begin`, or `start transaction …` with an isolation level or access mode). */
const TRANSACTION_START = /^(begin|start transaction)\b/i
/** How Kysely ends one. Savepoints (`savepoint`, `release savepoint`, `rollback to …`) stay inside it. */
const TRANSACTION_END = /^(commit|rollback)$/i

function toKysely<R>(result: pg.QueryResult): PostgresQueryResult<R> {
  // pg types `command` as any string; it is the SQL command tag, one of those Kysely reads.
  return { command: result.command as PostgresQueryResult<R>['command'], rowCount: result.rowCount ?? 0, rows: result.rows as R[] }
}

/** One checkout of a pooled client. A class, not closures: one is made for every transaction and read. */
class CheckedOutConnection implements PostgresPoolClient {
  /**
   * Set once a statement was given up on at the deadline: pg leaves it in flight, so the client is
   * closed on release rather than pooled again (were it reused, a late answer would be read as
   * the next request's, or a late BEGIN open a transaction under it that never commits).
   */
  #abandoned = false
  /** Set once a statement failed because the session or its socket died: closed on release. */
  #lost = false
  readonly #client: pg.PoolClient
  /** When this unit of work must be over, on performance.now()'s clock; infinite without a statement timeout. */
  readonly #deadline: number
  /** `set local statement_timeout = …`, or undefined without a timeout. */
  readonly #setTimeout: string | undefined
  /** Direct connections only: the pool's statement names (prepared-statements.ts). */
  readonly #prepared: PreparedStatements | undefined
  /** Whether a transaction Kysely opened is open (pooled: its statements are under its own SET LOCAL). */
  #inTransaction = false

  constructor(client: pg.PoolClient, deadline: number, setTimeout: string | undefined, prepared: PreparedStatements | undefined) {
    this.#client = client
    this.#deadline = deadline
    this.#setTimeout = setTimeout
    this.#prepared = prepared
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only when the dialect is given a `cursor` class; this one is not.
    if (typeof sqlOrCursor !== 'string') throw new Error('Streaming queries are not configured.')
    if (!this.#abandoned && performance.now() >= this.#deadline) this.#abandoned = true
    if (this.#abandoned) {
      // Closing the connection on release rolls its transaction back: a server that let the
      // deadline pass is not waited for once more (pg would queue the ROLLBACK behind the
      // unanswered statement, doubling the wait).
      if (sqlOrCursor === 'rollback') return Promise.resolve(NOTHING_RUN)
      return Promise.reject(new DatabaseDeadlineExceeded())
    }
    const running = this.#run<R>(sqlOrCursor, parameters).catch((error: unknown) => {
      // The server ended this session (pg_terminate_backend, a shutdown: FATAL 57P01-57P03) or the
      // socket failed: the connection is dead even if its close has not arrived yet. Closed on
      // release, never pooled again: the next checkout must not be handed it (decisions §12).
      if (isConnectionLost(error)) this.#lost = true
      throw error
    })
    if (this.#deadline === Number.POSITIVE_INFINITY) return running
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#abandoned = true
        reject(new DatabaseDeadlineExceeded())
      }, this.#deadline - performance.now())
      running.then(
        (result) => {
          clearTimeout(timer)
          resolve(result)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(error)
        },
      )
    })
  }

  async #run<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    const setTimeout = this.#setTimeout
    if (setTimeout === undefined) return toKysely(await this.#direct(sql, parameters))
    if (TRANSACTION_START.test(sql)) {
      // Kysely's BEGIN carries no parameters, so pg sends it with the simple protocol, which takes
      // several statements at once: the timeout costs no round trip.
      const results = (await this.#client.query(`${sql}; ${setTimeout}`)) as unknown as pg.QueryResult[]
      this.#inTransaction = true
      return toKysely(results[0]!)
    }
    if (this.#inTransaction) {
      if (TRANSACTION_END.test(sql)) this.#inTransaction = false
      return toKysely(await this.#client.query(sql, [...parameters]))
    }
    // A statement outside a transaction runs in one of its own, so that the timeout can be set
    // for it alone. The three are pipelined (written together, answered in order): one round trip.
    // Each ends with its own Sync, so a failing statement leaves the COMMIT a rollback, not an error.
    const begin = this.#client.query(`begin; ${setTimeout}`)
    const statement = this.#client.query(sql, [...parameters])
    const commit = this.#client.query('commit')
    const [began, ran, committed] = await Promise.allSettled([begin, statement, commit])
    if (began.status === 'rejected') throw began.reason
    if (ran.status === 'rejected') throw ran.reason
    if (committed.status === 'rejected') throw committed.reason
    return toKysely(ran.value)
  }

  /**
   * A statement on a direct connection, named (prepared) when it has parameters; Kysely's
   * transaction control has none and goes as a simple query. When a migration changed the result
   * of a prepared statement, a read outside a transaction runs again unnamed; in a transaction,
   * which the failure aborted, the work fails as retryable (503).
   */
  async #direct(sql: string, parameters: ReadonlyArray<unknown>): Promise<pg.QueryResult> {
    const prepared = this.#prepared
    if (prepared === undefined) return this.#client.query(sql, [...parameters])
    if (parameters.length === 0) {
      if (TRANSACTION_START.test(sql)) this.#inTransaction = true
      else if (TRANSACTION_END.test(sql)) this.#inTransaction = false
      return this.#client.query(sql)
    }
    try {
      return await this.#client.query(prepared.config(sql, [...parameters]))
    } catch (error) {
      if (!isChangedResultType(error)) throw error
      prepared.invalidate()
      if (this.#inTransaction) throw new PreparedStatementInvalidated(error)
      return this.#client.query(sql, [...parameters])
    }
  }

  release(destroy?: boolean): void {
    this.#client.release(destroy === true || this.#abandoned || this.#lost || this.#prepared?.isStale(this.#client) === true)
  }
}

/** The transaction-scoped advisory lock one migration run holds (any number; distinct from the app's others). */
const MIGRATION_LOCK = 7_324_221_001

/**
 * Brings the schema up to date, in one transaction that first takes an advisory lock held until it
 * commits: several instances starting together migrate once, the others wait and then find nothing
 * to do. One transaction also makes it one server session behind a pooler in transaction mode
 * (PgBouncer): Kysely's own migration lock is session-level (pg_advisory_lock, then unlock), and
 * taken outside a transaction its lock and unlock could land on different server connections,
 * leaving the lock held where the next instance's start would wait on it.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  // BEGIN and COMMIT by hand: Kysely's Migrator cannot be given a Transaction, only a connection.
  await db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection)
    try {
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(connection)
      const migrator = new Migrator({ db: connection, provider: { getMigrations: async () => migrations }, disableTransactions: true })
      const { error, results } = await migrator.migrateToLatest()
      const failed = results?.find((result) => result.status === 'Error')
      if (error || failed) {
        const reason = error instanceof Error ? error.message : String(error ?? 'unknown error')
        throw new Error(`${failed ? `Migration ${failed.migrationName}` : 'Migrating the database'} failed: ${reason}`, { cause: error })
      }
      await sql`commit`.execute(connection)
    } catch (error) {
      // What ran before the failure is undone with it; a rollback that fails too (the connection
      // is gone) hides nothing, the first error is the one thrown.
      await sql`rollback`.execute(connection).catch(() => {})
      throw error
    }
  })
}
