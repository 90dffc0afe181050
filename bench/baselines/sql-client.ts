/**
 * The one database seam of the baselines: a query function and a transaction, over a `pg` pool
 * (PostgreSQL) or an on-disk PGlite (`--db pglite`), so each baseline program runs on both.
 */
import { PGlite } from '@electric-sql/pglite'
import pg, { type QueryResultRow } from 'pg'

export interface SqlClient {
  query<Row extends QueryResultRow>(text: string, params?: unknown[]): Promise<Row[]>
  /** Runs `work` between BEGIN and COMMIT on one connection (ROLLBACK when it throws). */
  transaction<T>(work: (query: SqlClient['query']) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** Pool size 10: the same as the service's pool (src/db/database.ts). */
const POOL_SIZE = 10

/**
 * Every statement is a named prepared statement (parsed and planned once per connection), as the
 * service's are on a direct connection (src/db/prepared-statements.ts): the baselines are as
 * strong as a hand-written program can make them.
 */
function preparedNames(): (text: string) => string {
  const names = new Map<string, string>()
  return (text) => {
    let name = names.get(text)
    if (name === undefined) {
      name = `bench_${names.size}`
      names.set(text, name)
    }
    return name
  }
}

export async function openSqlClient(env: Record<string, string | undefined> = process.env): Promise<SqlClient> {
  if (env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: POOL_SIZE })
    pool.on('error', () => {})
    const nameOf = preparedNames()
    const prepared = (text: string, params: unknown[] | undefined) => ({ name: nameOf(text), text, values: params ?? [] })
    return {
      query: async <Row extends QueryResultRow>(text: string, params?: unknown[]) => (await pool.query<Row>(prepared(text, params))).rows,
      async transaction(work) {
        const client = await pool.connect()
        try {
          await client.query('begin')
          const result = await work(
            async <Row extends QueryResultRow>(text: string, params?: unknown[]) => (await client.query<Row>(prepared(text, params))).rows,
          )
          await client.query('commit')
          return result
        } catch (error) {
          await client.query('rollback').catch(() => {})
          throw error
        } finally {
          client.release()
        }
      },
      close: () => pool.end(),
    }
  }
  const dataDir = env.PGLITE_DIR
  if (!dataDir) throw new Error('set DATABASE_URL (PostgreSQL) or PGLITE_DIR (a PGlite data directory)')
  const pglite = await PGlite.create({ dataDir })
  return {
    query: async <Row extends QueryResultRow>(text: string, params?: unknown[]) => (await pglite.query<Row>(text, params)).rows,
    transaction: (work) =>
      pglite.transaction((tx) =>
        work(async <Row extends QueryResultRow>(text: string, params?: unknown[]) => (await tx.query<Row>(text, params)).rows),
      ),
    close: () => pglite.close(),
  }
}
