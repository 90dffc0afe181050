/**
 * build(t) gives each test its own app on its own database, cloned from the migrated and seeded
 * template (see setup/templates.ts), and closes both when the test ends. Tests run on PGlite by
 * default and on PostgreSQL when DATABASE_URL is set.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { Response as LightMyRequestResponse } from 'light-my-request'
import type { LogEvent } from 'kysely'
import pg from 'pg'
import { buildApp } from '../src/app.ts'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { loadConfig, type AppConfig } from '../src/config.ts'
import type { Contracts } from '../src/contract/contracts.ts'
import { contractsOnDisk } from './contract-files.ts'
import { createDatabase, type DatabaseHandle } from '../src/db/database.ts'
import { contractViolations } from './contract-validator.ts'
import {
  createServerDatabase,
  dropServerDatabase,
  loadPgliteTemplate,
  postgresUrl,
  templateDatabaseName,
  withDatabase,
} from './setup/templates.ts'

export const TEST_JWT_SECRET = 'test-secret-0123456789abcdef0123456789abcdef'

interface Teardown {
  teardown(fn: () => unknown): void
  fail?(message: string): void
}

export interface TestDatabaseOptions {
  onQuery?: (event: LogEvent) => void
  /** PostgreSQL's statement timeout for this database's pool (5 s by default). */
  statementTimeoutMs?: number
  /** PostgreSQL: force the connection mode (DB_POOLED); found out when undefined. */
  pooled?: boolean
  /** PostgreSQL: connections in the pool (5 by default here). */
  poolSize?: number
  /** PostgreSQL: how long a checkout may wait for a connection (2 s by default). */
  connectTimeoutMs?: number
}

/** A fresh database with the demo data, private to the calling test. */
export async function createTestDatabase(t: Teardown, options: TestDatabaseOptions = {}): Promise<DatabaseHandle> {
  const url = postgresUrl()
  if (!url) {
    const handle = await createDatabase({ pgliteTemplate: await loadPgliteTemplate(), ...options })
    t.teardown(() => handle.close())
    return handle
  }
  const name = `${templateDatabaseName(url).replace(/_template$/, '')}_t_${process.pid}_${randomBytes(4).toString('hex')}`
  return serverDatabase(t, url, name, templateDatabaseName(url), (database) => createDatabase({ url: database, poolSize: 5, ...options }))
}

/** An empty database (no migration run yet), private to the test. */
export async function createEmptyDatabase(t: Teardown): Promise<DatabaseHandle> {
  const url = postgresUrl()
  if (!url) {
    const handle = await createDatabase({ url: 'memory://' })
    t.teardown(() => handle.close())
    return handle
  }
  const name = `empty_${process.pid}_${randomBytes(4).toString('hex')}`
  return serverDatabase(t, url, name, undefined, (database) => createDatabase({ url: database, poolSize: 2 }))
}

/** A database of the test's own on the PostgreSQL server `url` names, dropped once its handle is closed when the test ends. */
async function serverDatabase(
  t: Teardown,
  url: string,
  name: string,
  template: string | undefined,
  open: (databaseUrl: string) => Promise<DatabaseHandle>,
): Promise<DatabaseHandle> {
  const handle = await open(await createServerDatabase(url, name, template))
  t.teardown(async () => {
    await handle.close()
    await dropServerDatabase(url, name)
  })
  return handle
}

export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({ NODE_ENV: 'test', JWT_SECRET: TEST_JWT_SECRET, SEED: 'false', ...env })
}

export interface BuildOptions extends TestDatabaseOptions {
  env?: Record<string, string>
  database?: DatabaseHandle
  /** Skip checking responses against openapi.yaml (for tests that send what the contract does not describe). */
  uncheckedResponses?: boolean
  /** Where the app's log lines go (set LOG_LEVEL in env too: tests are silent by default). */
  loggerStream?: { write(line: string): void }
  /** The contracts to build from instead of openapi.yaml and schema.graphql as they are (a test's edited copy). */
  contracts?: Contracts
}

/** The contracts as they are, read and parsed once per test process (buildApp reads them only). */
let contractsAsTheyAre: Contracts | undefined

/**
 * The app of one test. Every response under /api/v1 that the test receives through inject is
 * checked against openapi.yaml, errors included; a violation fails the test that received it.
 */
export async function build(t: Teardown, options: BuildOptions = {}): Promise<FastifyInstance> {
  const database = options.database ?? (await createTestDatabase(t, options))
  const replica = readReplica(database, options.env)
  // The test's database has reached the replica before the app opens its pool there.
  if (replica) await replica.caughtUp()
  const app = await buildApp({
    config: testConfig(replica ? { DATABASE_REPLICA_URLS: replica.url, ...options.env } : options.env),
    database,
    ...(options.loggerStream ? { loggerStream: options.loggerStream } : {}),
    contracts: options.contracts ?? (contractsAsTheyAre ??= contractsOnDisk()),
  })
  t.teardown(() => app.close())
  if (replica) readThroughReplica(app, replica)
  if (!options.uncheckedResponses && t.fail) checkResponsesAgainstContract(app, t.fail.bind(t))
  return app
}

/**
 * The streaming replica of DATABASE_URL's server that `npm run test:replica` starts
 * (scripts/test-with-replica.ts), as TEST_DATABASE_REPLICA_URL; its pools, opened once per test
 * process, let the process exit when idle.
 */
let replicaPools: { primary: pg.Pool; replica: pg.Pool } | undefined

interface ReadReplica {
  /** The replica's copy of the test's database: the app's DATABASE_REPLICA_URLS. */
  url: string
  /** Resolves once the replica has replayed every commit the primary had flushed when this was called. */
  caughtUp(): Promise<void>
}

function readReplica(database: DatabaseHandle, env: Record<string, string> | undefined): ReadReplica | undefined {
  const server = process.env.TEST_DATABASE_REPLICA_URL
  const primaryServer = postgresUrl()
  // A test that configures replicas itself (test/db/read-replicas.test.ts) keeps its own.
  if (!server || !primaryServer || database.kind !== 'postgres' || !database.url || env?.DATABASE_REPLICA_URLS !== undefined)
    return undefined
  replicaPools ??= {
    primary: new pg.Pool({ connectionString: primaryServer, max: 2, allowExitOnIdle: true }),
    replica: new pg.Pool({ connectionString: server, max: 2, allowExitOnIdle: true }),
  }
  const pools = replicaPools
  return {
    url: withDatabase(server, new URL(database.url).pathname.slice(1)),
    async caughtUp() {
      // The primary commits synchronously in that run: every commit so far is at or before its flush position.
      const flushed = (await pools.primary.query<{ lsn: string }>('select pg_current_wal_flush_lsn()::text as lsn')).rows[0]?.lsn
      const deadline = Date.now() + 10_000
      for (;;) {
        const replayed = await pools.replica.query<{ caught: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as caught', [
          flushed,
        ])
        if (replayed.rows[0]?.caught) return
        if (Date.now() > deadline) throw new Error(`the replica did not replay ${flushed} within 10 s`)
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
    },
  }
}

/**
 * Under `npm run test:replica`: the app reads through the replica, and every request waits first
 * until the replica has replayed every commit so far. The service itself lets the replica lag
 * behind other callers' writes and a test's direct writes to its database (decisions §15); a test
 * written for one database expects them. Read-your-writes itself is test/db/read-replicas.test.ts.
 */
function readThroughReplica(app: FastifyInstance, replica: ReadReplica): void {
  const state = app.replicas?.status()[0]?.state
  if (state !== 'up') throw new Error(`the test's read replica ${replica.url} is ${state ?? 'not configured'}, not up`)
  const inject = app.inject.bind(app) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>
  const afterReplay = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    await replica.caughtUp()
    return inject(options)
  }
  ;(app as unknown as { inject: typeof afterReplay }).inject = afterReplay
}

function checkResponsesAgainstContract(app: FastifyInstance, fail: (message: string) => void): void {
  const inject = app.inject.bind(app) as (options: InjectOptions) => Promise<LightMyRequestResponse>
  const checked = async (options: InjectOptions): Promise<LightMyRequestResponse> => {
    const response = await inject(options)
    const url = typeof options.url === 'string' ? options.url : ''
    const method = (options.method ?? 'GET').toUpperCase()
    if (url.startsWith('/api/v1/') && method !== 'HEAD') {
      const violations = contractViolations({
        method,
        url,
        statusCode: response.statusCode,
        headers: response.headers,
        body: response.body,
      })
      // A method a path does not have (405) and a path that does not exist (404, or 429 once its
      // caller's budget is spent) answer outside any operation, so no operation documents them.
      const outsideOperations = response.statusCode === 405 || violations.some((v) => v.includes('is not an operation'))
      if (violations.length > 0 && !outsideOperations) fail(`contract violation: ${violations.join('; ')}`)
    }
    return response
  }
  ;(app as unknown as { inject: typeof checked }).inject = checked
}

const sign = createTokenSigner(TEST_JWT_SECRET)

/** A bearer token for a seeded user: 1 is Ada (the examples' admin), 2 Grace, 3 Alan, 4 Katherine. */
export function tokenFor(sub: number | string, scope = 'orders:read orders:write articles:write', ttlSeconds = 3600): string {
  return sign({ sub: String(sub), scope }, ttlSeconds)
}

export function bearer(sub: number | string, scope?: string): { authorization: string } {
  return { authorization: `Bearer ${tokenFor(sub, scope)}` }
}

/**
 * The Redis that tests share state through, or undefined when none answers: such a test then
 * skips with a message, except in CI, which starts Redis and where its absence is a failure.
 */
export async function reachableRedis(t: { skip(message: string, fn: () => unknown): void }): Promise<string | undefined> {
  const url = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379'
  // Loaded here only: most test processes never ask for Redis (decisions §14).
  const { Redis } = await import('ioredis')
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  try {
    await probe.connect()
    await probe.ping()
    return url
  } catch {
    if (process.env.CI) throw new Error(`Redis is not reachable at ${url}; CI must start it`)
    t.skip(`no Redis reachable at ${url}: start one to run this test`, async () => {})
    return undefined
  } finally {
    probe.disconnect()
  }
}

/**
 * POST /graphql: `request` is the JSON body, or a query alone (sent as `{ query }`). The raw
 * response, so that a test asserts on its status, headers and body as it would on inject's. A body
 * that is not a JSON object (bytes, a malformed or pre-serialized string) goes through `app.inject`.
 */
export function gql(
  app: FastifyInstance,
  request: string | Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<LightMyRequestResponse> {
  const payload = typeof request === 'string' ? { query: request } : request
  return app.inject({ method: 'POST', url: '/graphql', ...(headers ? { headers } : {}), payload })
}

/** POST /api/v1/orders with these items (Grace's, or `headers`' caller's), the response as it came. */
export function createOrder(
  app: FastifyInstance,
  items: unknown,
  headers: Record<string, string> = bearer(2, 'orders:read orders:write'),
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload: { items } })
}
