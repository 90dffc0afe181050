/**
 * Subscriptions over graphql-transport-ws with the graphql-ws client, against listening servers.
 * Two instances share one database (two pools on PostgreSQL, one in-process PGlite otherwise):
 * events caused on one reach subscribers on the other, in commit order, each once.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import type { Client } from 'graphql-ws'
import { Redis } from 'ioredis'
import { createDatabase } from '../../src/db/database.ts'
import { REDIS_EVENTS_CHANNEL } from '../../src/events/redis-wakeups.ts'
import { bearer, build, createOrder, createTestDatabase, reachableRedis, TEST_JWT_SECRET, tokenFor } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { client, listening } from './subscription-clients.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

type Test = Parameters<typeof build>[0]

/** Two instances on one database; the second on a pool of its own where the database has pools. */
async function twoInstances(t: Test, env: Record<string, string> = {}) {
  const database = await createTestDatabase(t)
  const other = database.url ? await createDatabase({ url: database.url, poolSize: 5 }) : database
  if (other !== database) t.teardown(() => other.close())
  const a = await build(t, { database, env })
  const b = await build(t, { database: other, env })
  return { a, b, database }
}

/** Collects the events of one subscription until `count` arrived (or the wait times out). */
function collect<T>(c: Client, query: string, count: number, timeoutMs = 15_000) {
  const received: T[] = []
  const errors: unknown[] = []
  let ready!: () => void
  const started = new Promise<void>((resolve) => (ready = resolve))
  const done = new Promise<T[]>((resolve) => {
    const timer = setTimeout(() => resolve(received), timeoutMs)
    const unsubscribe = c.subscribe<T>(
      { query },
      {
        next: (value) => {
          if (value.errors) errors.push(...value.errors)
          else received.push(value.data as T)
          if (received.length >= count) {
            clearTimeout(timer)
            unsubscribe()
            resolve(received)
          }
        },
        error: (error) => {
          errors.push(error)
          clearTimeout(timer)
          resolve(received)
        },
        complete: () => resolve(received),
      },
    )
    // The subscription is registered on the server once the socket is acknowledged; give it a tick.
    c.on('connected', () => setTimeout(ready, 200))
  })
  return { done, errors, started }
}

t.test('a subscriber on instance A receives, in commit order and once each, the events of 200 mutations made through B', async (t) => {
  const { a, b } = await twoInstances(t)
  const url = await listening(a)
  const watcher = collect<{ orderCreated: { id: string; total: number; user: { name: string } } }>(
    client(t, url, tokenFor(2, 'orders:read')),
    'subscription { orderCreated { id total user { name } } }',
    200,
    60_000,
  )
  await watcher.started
  const created: string[] = []
  for (let i = 0; i < 200; i++) {
    const response = await createOrder(b, [{ sku: 'CB-404', qty: 1 + (i % 5) }], bearer(2, 'orders:write'))
    created.push(toGlobalId('Order', response.json().id))
  }
  const events = await watcher.done
  t.same(watcher.errors, [])
  t.equal(events.length, 200, 'none missing')
  t.same(
    events.map((event) => event.orderCreated.id),
    created,
    'in commit order, none duplicated',
  )
  t.equal(events[0]!.orderCreated.user.name, 'Grace Hopper', 'payloads resolve like queries')
})

t.test('an order event never reaches another non-admin user; admins see every order', async (t) => {
  const { a, b } = await twoInstances(t)
  const url = await listening(a)
  const alan = collect<{ orderCreated: { id: string } }>(
    client(t, url, tokenFor(3, 'orders:read')),
    'subscription { orderCreated { id } }',
    1,
    3000,
  )
  const admin = collect<{ orderCreated: { id: string } }>(client(t, url, tokenFor(1, 'admin')), 'subscription { orderCreated { id } }', 1)
  await Promise.all([alan.started, admin.started])
  await createOrder(b, [{ sku: 'KB-101', qty: 1 }], bearer(2, 'orders:write'))
  t.equal((await admin.done).length, 1, "the admin sees Grace's order")
  t.equal((await alan.done).length, 0, 'Alan does not')
})

t.test("orderStatusChanged(orderId) and commentAdded(articleId) deliver only their record's events", async (t) => {
  const { a, b } = await twoInstances(t)
  const url = await listening(a)
  const grace = bearer(2, 'orders:read orders:write articles:write')
  const order = (await createOrder(b, [{ sku: 'KB-101', qty: 1 }], grace)).json()
  const other = (await createOrder(b, [{ sku: 'KB-101', qty: 1 }], grace)).json()
  const status = collect<{ orderStatusChanged: { id: string; status: string } }>(
    client(t, url, tokenFor(2, 'orders:read')),
    `subscription { orderStatusChanged(orderId: ${order.id}) { id status } }`,
    2,
  )
  const comments = collect<{ commentAdded: { body: string; author: { name: string } } }>(
    client(t, url, tokenFor(4, '')),
    'subscription { commentAdded(articleId: 2) { body author { name } } }',
    1,
  )
  await Promise.all([status.started, comments.started])
  await b.inject({ method: 'POST', url: `/api/v1/orders/${other.id}/cancellation`, headers: grace })
  await b.inject({ method: 'POST', url: `/api/v1/orders/${order.id}/payment`, headers: grace })
  await b.inject({ method: 'POST', url: `/api/v1/orders/${order.id}/refund`, headers: grace })
  await b.inject({ method: 'POST', url: '/api/v1/articles/1/comments', headers: grace, payload: { body: 'elsewhere' } })
  await b.inject({ method: 'POST', url: '/api/v1/articles/2/comments', headers: grace, payload: { body: 'here' } })
  t.same(
    (await status.done).map((e) => e.orderStatusChanged.status),
    ['paid', 'refunded'],
  )
  t.same(
    (await comments.done).map((e) => e.commentAdded),
    [{ body: 'here', author: { name: 'Grace Hopper' } }],
  )
})

t.test('an event committed by an instance that died before relaying it is published by the next one', async (t) => {
  const database = await createTestDatabase(t)
  // A listens but does not relay; B commits and "dies" without relaying.
  const a = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
  const url = await listening(a)
  const watcher = collect<{ orderCreated: { id: string } }>(
    client(t, url, tokenFor(2, 'orders:read')),
    'subscription { orderCreated { id } }',
    1,
  )
  await watcher.started
  const bDatabase = database.url ? await createDatabase({ url: database.url, poolSize: 2 }) : database
  const b = await build({ teardown: () => {} }, { database: bDatabase, env: { EVENTS_RELAY: 'false' } })
  const order = (await createOrder(b, [{ sku: 'KB-101', qty: 1 }], bearer(2, 'orders:write'))).json()
  await b.close()
  if (bDatabase !== database) await bDatabase.close()
  const pending = await database.db.selectFrom('outbox').select('id').where('published_at', 'is', null).execute()
  t.equal(pending.length, 1, 'committed, not yet published')
  // The next instance to start relays what is waiting.
  const cDatabase = database.url ? await createDatabase({ url: database.url, poolSize: 2 }) : database
  if (cDatabase !== database) t.teardown(() => cDatabase.close())
  await build(t, { database: cDatabase })
  const events = await watcher.done
  t.same(
    events.map((e) => e.orderCreated.id),
    [toGlobalId('Order', order.id)],
  )
})

t.test(
  'a server process SIGKILLed between commit and publish: the event reaches subscribers through the next instance',
  { skip: postgresUrl() ? false : 'needs a database that several processes share (DATABASE_URL); CI runs it on PostgreSQL' },
  async (t) => {
    const database = await createTestDatabase(t)
    const a = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
    const watcher = collect<{ orderCreated: { id: string } }>(
      client(t, await listening(a), tokenFor(2, 'orders:read')),
      'subscription { orderCreated { id } }',
      1,
    )
    await watcher.started
    // `npm start`'s command in a process of its own, not relaying, so the kill lands in the window.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        PORT: '0',
        HOST: '127.0.0.1',
        JWT_SECRET: TEST_JWT_SECRET,
        SEED: 'false',
        EVENTS_RELAY: 'false',
        LOG_LEVEL: 'info',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    t.teardown(() => child.kill('SIGKILL'))
    let baseUrl: string | undefined
    for await (const line of createInterface({ input: child.stdout! })) {
      baseUrl = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1]
      if (baseUrl) break
    }
    const response = await fetch(`${baseUrl}/api/v1/orders`, {
      method: 'POST',
      headers: { ...bearer(2, 'orders:write'), 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
    })
    t.equal(response.status, 201, 'the child committed an order')
    const order = (await response.json()) as { id: number }
    child.kill('SIGKILL')
    await once(child, 'exit')
    const pending = await database.db.selectFrom('outbox').select('id').where('published_at', 'is', null).execute()
    t.equal(pending.length, 1, 'committed, not published when the process died')
    const next = await createDatabase({ url: database.url!, poolSize: 2 })
    t.teardown(() => next.close())
    await build(t, { database: next })
    t.same(
      (await watcher.done).map((e) => e.orderCreated.id),
      [toGlobalId('Order', order.id)],
      'the next instance to start published it',
    )
  },
)

t.test('with Redis, events fan out through Redis pub/sub: every event once, in order, on the other instance', async (t) => {
  const redisUrl = await reachableRedis(t)
  if (!redisUrl) return
  const probe = new Redis(redisUrl)
  t.teardown(() => probe.disconnect())
  const before = Number(((await probe.pubsub('NUMSUB', REDIS_EVENTS_CHANNEL)) as [string, number])[1])
  const { a, b } = await twoInstances(t, { REDIS_URL: redisUrl })
  const subscribed = Number(((await probe.pubsub('NUMSUB', REDIS_EVENTS_CHANNEL)) as [string, number])[1])
  t.ok(subscribed >= before + 2, 'both instances subscribe to the Redis events channel')
  const url = await listening(a)
  const watcher = collect<{ orderCreated: { id: string } }>(
    client(t, url, tokenFor(2, 'orders:read')),
    'subscription { orderCreated { id } }',
    200,
    60_000,
  )
  await watcher.started
  const created: string[] = []
  for (let i = 0; i < 200; i++) {
    const response = await createOrder(b, [{ sku: 'CB-404', qty: 1 }], bearer(2, 'orders:write'))
    created.push(toGlobalId('Order', response.json().id))
  }
  const events = await watcher.done
  t.same(
    events.map((event) => event.orderCreated.id),
    created,
    'all 200, in commit order, none duplicated',
  )
})
