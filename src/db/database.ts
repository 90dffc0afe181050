import { PGlite } from '@electric-sql/pglite'
import {
  Kysely,
  Migrator,
  PostgresDialect,
  type LogEvent,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely'
import { PGliteDialect } from './pglite-dialect.ts'
import pg from 'pg'
import { mkdir } from 'node:fs/promises'
import { migrations } from './migrations/index.ts'
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
   * PostgreSQL: longest a statement may run, in ms (`DB_STATEMENT_TIMEOUT`, 5 s by default); 0 for
   * no limit (migrations, which may rightly run longer).
   */
  statementTimeoutMs?: number
  /** PostgreSQL: longest to wait for a connection, new or pooled (2 s by default). */
  connectTimeoutMs?: number
  /** Where a lost connection is reported (the app's logger); a line on stderr otherwise. */
  logger?: DatabaseLogger
}

export interface DatabaseLogger {
  warn(object: { err: unknown }, message: string): void
}

export interface DatabaseHandle {
  db: Kysely<Database>
  kind: DatabaseKind
  /** The PostgreSQL URL, so that another instance can open its own pool on the same database. */
  url: string | undefined
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
  close(): Promise<void>
}

const INT8_OID = 20
// PGlite's typings leave out the static defaultStartParams its class carries at run time.
const PGLITE_DEFAULT_START_PARAMS: string[] = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams

// bigint columns (order totals, counts) stay below 2^53, so numbers are exact and keep the API's
// integer type; the default would hand back strings (pg) or bigint (PGlite).
const parseInt8 = (value: string): number => Number(value)

export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000
export const DEFAULT_CONNECT_TIMEOUT_MS = 2000
/** How much longer than statement_timeout the driver waits for a server that answers nothing. */
const QUERY_TIMEOUT_MARGIN_MS = 1000

const stderrLogger: DatabaseLogger = {
  warn: ({ err }, message) => console.warn(`${message}: ${err instanceof Error ? err.message : String(err)}`),
}

export async function createDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const { log, observeQueries } = statementLog(options.onQuery)
  const url = options.url
  if (url?.startsWith('postgres:') || url?.startsWith('postgresql:')) {
    const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS
    const logger = options.logger ?? stderrLogger
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      // Bounds opening a connection and also waiting for a free pooled one: a request that cannot
      // get a connection within it fails (503) instead of queueing without end.
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      ...(statementTimeoutMs > 0
        ? {
            // The server cancels a statement past this (57014), releasing the locks it holds…
            statement_timeout: statementTimeoutMs,
            // …and the driver stops waiting a little later still, for a server that answers
            // nothing at all (frozen, or a network cut with no reset).
            query_timeout: statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
          }
        : {}),
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
    // checkout opens a fresh connection. Recovery needs nothing more.
    pool.on('connect', (client) => {
      client.on('error', (error) => logger.warn({ err: error }, 'database connection lost'))
    })
    // pg-pool re-emits an idle client's error on the pool, which needs a listener too; the
    // client's own listener has already reported it.
    pool.on('error', () => {})
    let connectTimeouts = 0
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: droppingSilentConnections(pool, () => void connectTimeouts++) }),
      log,
    })
    return {
      db,
      kind: 'postgres',
      url,
      pool,
      pglite: undefined,
      observeQueries,
      connectTimeouts: () => connectTimeouts,
      close: () => db.destroy(),
    }
  }

  // No statement timeout on PGlite: it is one session inside this process, so no other session can
  // hold a lock it waits for, and its WebAssembly backend has no timer signal to cancel a statement
  // with (it accepts `SET statement_timeout` and ignores it).
  const inMemory = url?.startsWith('memory:') || options.pgliteTemplate !== undefined
  const dataDir = inMemory ? undefined : (options.dataDir ?? './data')
  if (dataDir) await mkdir(dataDir, { recursive: true })
  const pglite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(options.pgliteTemplate ? { loadDataDir: options.pgliteTemplate } : {}),
    parsers: { [INT8_OID]: parseInt8 },
    // PostgreSQL arms a 10 s startup-progress timer that PGlite never disarms; left on, that
    // timer keeps a closed PGlite's process alive.
    startParams: [...PGLITE_DEFAULT_START_PARAMS, '-c', 'log_startup_progress_interval=0'],
  })
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }), log })
  return {
    db,
    kind: 'pglite',
    url: undefined,
    pool: undefined,
    pglite,
    observeQueries,
    connectTimeouts: () => 0,
    close: () => db.destroy(),
  }
}

/**
 * Kysely's log hook, fanned out: the `onQuery` given at creation (tests count statements with it)
 * and the listeners added later through `observeQueries`. Kysely times each statement for it.
 */
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

/** pg-pool's and pg's words for "no connection within connectionTimeoutMillis". */
const CONNECT_TIMEOUT_MESSAGES = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'timeout expired',
])

/**
 * The pool as Kysely sees it, except that a client whose query went unanswered past query_timeout
 * is closed when released rather than pooled again. pg gives up waiting but leaves that query in
 * flight: were the client reused, a late `begin` could open a transaction under the next
 * request's statements, which would then never commit.
 */
function droppingSilentConnections(pool: pg.Pool, onConnectTimeout: () => void): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect().catch((error: unknown) => {
        if (error instanceof Error && CONNECT_TIMEOUT_MESSAGES.has(error.message)) onConnectTimeout()
        throw error
      })
      return new CheckedOutConnection(client)
    },
    end: () => pool.end(),
  }
}

/** One checkout of a pooled client. A class, not closures: one is made for every transaction and read. */
class CheckedOutConnection implements PostgresPoolClient {
  /** Set when a query went unanswered past query_timeout: the client is closed on release. */
  #silent = false
  readonly #client: pg.PoolClient

  constructor(client: pg.PoolClient) {
    this.#client = client
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only when the dialect is given a `cursor` class; this one is not.
    if (typeof sqlOrCursor !== 'string') throw new Error('Streaming queries are not configured.')
    return this.#run<R>(sqlOrCursor, parameters)
  }

  async #run<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    try {
      const result = await this.#client.query(sql, [...parameters])
      // pg types `command` as any string; it is the SQL command tag, one of those Kysely reads.
      return { command: result.command as PostgresQueryResult<R>['command'], rowCount: result.rowCount ?? 0, rows: result.rows }
    } catch (error) {
      if (error instanceof Error && error.message === 'Query read timeout') this.#silent = true
      throw error
    }
  }

  release(destroy?: boolean): void {
    this.#client.release(destroy === true || this.#silent)
  }
}

/**
 * Brings the schema up to date. Kysely's Migrator takes a PostgreSQL advisory lock for the whole
 * run, so several instances starting together migrate once and the others wait.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((result) => result.status === 'Error')
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error')
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`)
  }
}
