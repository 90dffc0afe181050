/**
 * The statements the app's database driver sends for one request, BEGIN and COMMIT included,
 * counted where the driver sends them rather than through Kysely's log (which PGlite's BEGIN and
 * COMMIT never reach): on PostgreSQL each `query` call of a pooled client, on PGlite each simple
 * Query and extended-protocol Execute message (an Execute runs the text its Parse sent last).
 * Only the statements sent in the request's own async context count: the event delivery and the
 * webhook worker share the driver and run in their own. Nor does the WAL position a write's answer
 * carries when read replicas are configured (`npm run test:replica`): one statement after any write
 * (decisions §15), the cost of read-your-writes, not of the write.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type pg from 'pg'
import type { DatabaseHandle } from '../src/db/database.ts'

/** PostgreSQL's frontend message types: a simple Query, a Parse, an Execute. */
const QUERY = 0x51
const PARSE = 0x50
const EXECUTE = 0x45

/** The statement src/db/replicas.ts reads a write's commit position with. */
const READ_YOUR_WRITES_POSITION = /^select pg_current_wal_insert_lsn\(\)/

export interface DriverStatements {
  /** Runs `request` and returns its result with the texts of the statements the driver sent for it, in order. */
  during<Result>(request: () => Promise<Result>): Promise<{ result: Result; statements: string[] }>
}

/** Watches `database`'s driver from now on (build the app on it first, or after: checkouts are wrapped as they happen). */
export function watchDriverStatements(database: DatabaseHandle): DriverStatements {
  const requests = new AsyncLocalStorage<string[]>()
  const record = (text: string) => {
    if (!READ_YOUR_WRITES_POSITION.test(text)) requests.getStore()?.push(text)
  }
  const { pool, pglite } = database
  if (pool) {
    const wrapped = new WeakSet<pg.PoolClient>()
    pool.on('acquire', (client) => {
      if (wrapped.has(client)) return
      wrapped.add(client)
      const query = client.query.bind(client) as (...args: unknown[]) => unknown
      // pg's `query` takes a text or a config that carries one; the database module sends both.
      ;(client as { query: unknown }).query = (config: string | { text: string }, ...rest: unknown[]) => {
        record(typeof config === 'string' ? config : config.text)
        return query(config, ...rest)
      }
    })
  } else if (pglite) {
    const exec = pglite.execProtocolStream.bind(pglite)
    let parsed = ''
    pglite.execProtocolStream = (message, options) => {
      const bytes = Buffer.from(message.buffer, message.byteOffset, message.byteLength)
      // Each message: its type byte, its length (4 bytes, counting itself), its content.
      for (let offset = 0; offset + 5 <= bytes.length; offset += 1 + bytes.readUInt32BE(offset + 1)) {
        const content = bytes.subarray(offset + 5, offset + 1 + bytes.readUInt32BE(offset + 1))
        const cString = (from: number) => content.toString('utf8', from, content.indexOf(0, from))
        if (bytes[offset] === QUERY) record(cString(0))
        // A Parse holds the statement's name, then its text.
        else if (bytes[offset] === PARSE) parsed = cString(content.indexOf(0) + 1)
        else if (bytes[offset] === EXECUTE) record(parsed)
      }
      return exec(message, options)
    }
  } else {
    throw new Error('the database has neither a pool nor a PGlite to watch')
  }
  return {
    async during(request) {
      const statements: string[] = []
      const result = await requests.run(statements, request)
      return { result, statements }
    },
  }
}

/** The statements among `statements` that open, end or mark a transaction. */
export function transactionControl(statements: readonly string[]): string[] {
  return statements.filter((statement) => /^\s*(begin|start transaction|commit|rollback|savepoint|release)\b/i.test(statement))
}
