import { PGlite } from '@electric-sql/pglite'
import { Kysely, PGliteDialect, PostgresDialect, type LogEvent } from 'kysely'
import { Migrator } from 'kysely/migration'
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
}

export interface DatabaseHandle {
  db: Kysely<Database>
  kind: DatabaseKind
  /** The PostgreSQL URL, so that another instance can open its own pool on the same database. */
  url: string | undefined
  /** The pool when running on PostgreSQL (LISTEN/NOTIFY needs its own client). */
  pool: pg.Pool | undefined
  pglite: PGlite | undefined
  close(): Promise<void>
}

const INT8_OID = 20
const PGLITE_DEFAULT_START_PARAMS: string[] = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams

// bigint columns (order totals, counts) stay below 2^53, so numbers are exact and keep the API's
// integer type; the default would hand back strings (pg) or bigint (PGlite).
const parseInt8 = (value: string): number => Number(value)

export async function createDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const log = options.onQuery
  const url = options.url
  if (url?.startsWith('postgres:') || url?.startsWith('postgresql:')) {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    })
    // An idle client that loses its server must not crash the process; the next query reports it.
    pool.on('error', () => {})
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), ...(log ? { log } : {}) })
    return { db, kind: 'postgres', url, pool, pglite: undefined, close: () => db.destroy() }
  }

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
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }), ...(log ? { log } : {}) })
  return { db, kind: 'pglite', url: undefined, pool: undefined, pglite, close: () => db.destroy() }
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
