/**
 * What the event delivery tests share: two instances on one database, an admin watching
 * `orderCreated` through graphql-ws on one of them, orders created in bulk, and the outbox's own
 * delivery order to compare with. On PostgreSQL, statements that stand in for an operator (or a
 * fault) run on an admin connection and only ever touch the test's own database.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import { createDatabase, type DatabaseHandle } from '../../src/db/database.ts'
import type { BoundedPubSub } from '../../src/events/pubsub.ts'
import { LISTENER_APPLICATION_NAME } from '../../src/events/listener.ts'
import { bearer, build, createOrder, createTestDatabase, tokenFor } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { client, eventually, listening } from '../graphql/subscription-clients.ts'

type Test = Parameters<typeof build>[0]

export const onPostgres = postgresUrl() !== undefined

/** Two instances on one database: a pool each on PostgreSQL, one shared PGlite otherwise. */
export async function twoInstances(t: Test, env: { a?: Record<string, string>; b?: Record<string, string> } = {}) {
  const database = await createTestDatabase(t)
  const other = database.url ? await createDatabase({ url: database.url, poolSize: 5 }) : database
  if (other !== database) t.teardown(() => other.close())
  const a = await build(t, { database, env: env.a ?? {} })
  const b = await build(t, { database: other, env: env.b ?? {} })
  return { a, b, database }
}

/**
 * A customer of its own (a user id no other test run uses), so that the requests of a bulk test
 * never share a rate-limit counter with another run against the same Redis.
 */
export async function customer(database: DatabaseHandle): Promise<{ authorization: string }> {
  const id = 1_000_000 + randomInt(1_000_000_000)
  await sql`insert into users (id, name) overriding system value values (${id}, 'Bulk Buyer')`.execute(database.db)
  return bearer(id, 'orders:write')
}

export interface OrderWatcher {
  /** Order ids in the order the subscriber received them. */
  ids: string[]
  errors: unknown[]
  /** Resolves true once `count` events arrived, false if `timeoutMs` passes first. */
  received(count: number, timeoutMs?: number): Promise<boolean>
}

/** An admin subscribed to `orderCreated` on `app` (listening), once the server holds the subscription. */
export async function watchOrders(t: Test, app: FastifyInstance): Promise<OrderWatcher> {
  const url = await listening(app)
  const ids: string[] = []
  const errors: unknown[] = []
  // The REST id of each order (its GraphQL `id` is a global id): what the outbox and REST name it by.
  client(t, url, tokenFor(1, 'admin')).subscribe<{ orderCreated: { databaseId: number } }>(
    { query: 'subscription { orderCreated { databaseId } }' },
    {
      next: (value) => {
        if (value.errors) errors.push(...value.errors)
        else if (value.data) ids.push(String(value.data.orderCreated.databaseId))
      },
      error: (error) => errors.push(error),
      complete: () => {},
    },
  )
  const pubsub = app.graphql.pubsub as unknown as BoundedPubSub
  if (!(await eventually(() => pubsub.subscriptionCount('order.created') === 1, 10_000))) throw new Error('the subscription never started')
  return { ids, errors, received: (count, timeoutMs = 30_000) => eventually(() => ids.length >= count, timeoutMs) }
}

/** Creates `count` orders through `app`, `concurrency` requests at a time; returns the status codes and the new ids. */
export async function createOrders(app: FastifyInstance, headers: Record<string, string>, count: number, concurrency = 1) {
  const statuses: number[] = []
  const ids: string[] = []
  let next = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      const response = await createOrder(app, [{ sku: 'CB-404', qty: 1 + (i % 5) }], headers)
      statuses.push(response.statusCode)
      if (response.statusCode === 201) ids.push(String(response.json().id))
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { statuses, ids }
}

/** The ids of the orders whose `order.created` events were relayed, in delivery (seq) order. */
export async function relayedOrderIds(database: DatabaseHandle): Promise<string[]> {
  const rows = await sql<{ order_id: string }>`
    select payload->>'orderId' as order_id from outbox
    where topic = 'order.created' and seq is not null
    order by seq`.execute(database.db)
  return rows.rows.map((row) => row.order_id)
}

/** Long enough for a late duplicate to arrive: a wake-up, or the next tick of the one-second timer. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 1500))

/** The names of the events that were received more than once. */
export function duplicates(ids: string[]): string[] {
  return ids.filter((id, index) => ids.indexOf(id) !== index)
}

/** Polls an asynchronous `condition` every 100 ms until it holds (true) or `timeoutMs` passes (false). */
export async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return true
}

/**
 * Runs `statement` as the superuser, connected to the run's own database, or to `database` (a
 * test's clone) when given.
 */
export async function asAdmin<T extends pg.QueryResultRow = pg.QueryResultRow>(
  statement: string,
  values: unknown[] = [],
  database?: DatabaseHandle,
): Promise<T[]> {
  const admin = new pg.Client({ connectionString: database?.url ?? postgresUrl() })
  await admin.connect()
  try {
    return (await admin.query<T>(statement, values)).rows
  } finally {
    await admin.end()
  }
}

export function databaseName(database: DatabaseHandle): string {
  return new URL(database.url!).pathname.slice(1)
}

/** The backend pids of the event listeners connected to `database`. */
export async function listenerPids(database: DatabaseHandle): Promise<number[]> {
  const rows = await asAdmin<{ pid: number }>(
    'select pid from pg_stat_activity where datname = $1 and application_name = $2 order by pid',
    [databaseName(database), LISTENER_APPLICATION_NAME],
  )
  return rows.map((row) => row.pid)
}

/** Terminates the backends of `database` (only that database) that `filter` selects; returns how many. */
export async function terminateBackends(database: DatabaseHandle, filter: 'listeners' | 'all'): Promise<number> {
  const rows = await asAdmin<{ pid: number }>(
    `select pg_terminate_backend(pid) as terminated, pid from pg_stat_activity
     where datname = $1 and pid <> pg_backend_pid() and ($2 = 'all' or application_name = $3)`,
    [databaseName(database), filter, LISTENER_APPLICATION_NAME],
  )
  return rows.length
}

/** Refuses (or allows again) new connections to `database`; existing ones are untouched. */
export async function allowConnections(database: DatabaseHandle, allowed: boolean): Promise<void> {
  await asAdmin(`alter database "${databaseName(database)}" allow_connections ${allowed}`)
}

/**
 * A redis-server of the test's own on a free port, which the test may stop and start again
 * (the machine's shared Redis is never stopped). Stopped when the test ends.
 */
export async function ownRedis(t: Test): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void> }> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const port = (probe.address() as AddressInfo).port
  await new Promise((resolve) => probe.close(resolve))
  const url = `redis://127.0.0.1:${port}`
  let server: ChildProcess | undefined
  const start = async () => {
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    const ping = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    ping.on('error', () => {})
    try {
      const answered = await until(async () => {
        try {
          if (ping.status !== 'ready') await ping.connect()
          return (await ping.ping()) === 'PONG'
        } catch {
          return false
        }
      })
      if (!answered) throw new Error(`redis-server did not start on port ${port}`)
    } finally {
      ping.disconnect()
    }
  }
  const stop = async () => {
    const running = server
    server = undefined
    if (!running || running.exitCode !== null) return
    running.kill('SIGKILL')
    await once(running, 'exit')
  }
  await start()
  t.teardown(stop)
  return { url, stop, start }
}
