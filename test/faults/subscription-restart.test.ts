/**
 * A subscription event whose fields cannot be resolved because the database is away is never a
 * bare `data: null`: its loads are retried while the outage lasts, up to
 * SUBSCRIPTION_OUTAGE_WAIT, and past that the event arrives with a DATABASE_UNAVAILABLE error
 * naming it. Against a real PostgreSQL restart, on a cluster of this test's own.
 *
 * To cut an event's resolution deterministically, the test first holds the relay's advisory lock
 * (orders are committed, their events wait), then locks the `users` table and lets the relay go:
 * the subscriber's `Order.user` load is then waiting on that lock, which the restart cuts.
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { createDatabase } from '../../src/db/database.ts'
import { RELAY_LOCK } from '../../src/db/repositories/outbox.ts'
import type { BoundedPubSub } from '../../src/events/pubsub.ts'
import { bearer, build, tokenFor } from '../helper.ts'
import { client, eventually, listening } from '../graphql/subscription-clients.ts'
import { postgresUrl } from '../setup/templates.ts'
import { privateClusterUnavailable, startPrivateCluster } from './private-cluster.ts'
import { createOrderRetrying } from './retrying-create.ts'
import { fromGlobalId, toGlobalId } from '../../src/graphql/resolving/global-id.ts'

// The cluster is this test's own whatever DATABASE_URL says, so it could run in both of CI's
// suite runs; it runs in the PostgreSQL one only, as each test spends a few seconds starting its
// cluster and waiting out restarts and locks.
const SKIP = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set); it starts a cluster of its own'
  : process.env.CI
    ? false
    : (privateClusterUnavailable() ?? false)

const ORDER_CREATED = 'subscription { orderCreated { id total user { id name } items { sku qty product { name } } } }'

interface OrderCreated {
  id: string
  total: number
  user: { id: string; name: string }
  items: Array<{ sku: string; qty: number; product: { name: string } | null }>
}
interface EventMessage {
  data?: { orderCreated: OrderCreated } | null
  errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, unknown> }>
}

/** An app on the cluster's database, listening, with a graphql-ws subscriber of Grace's (user 2) orders. */
async function subscribedApp(t: Test, databaseUrl: string, statementTimeoutMs: number, env: Record<string, string> = {}) {
  // The connections a restart cuts are expected: not reported on stderr.
  const database = await createDatabase({ url: databaseUrl, poolSize: 5, statementTimeoutMs, logger: { warn: () => {} } })
  t.teardown(() => database.close())
  const app = await build(t, { database, env })
  const url = await listening(app)
  const received: EventMessage[] = []
  const failures: unknown[] = []
  client(t, url, tokenFor(2, 'orders:read')).subscribe<OrderCreated>(
    { query: ORDER_CREATED },
    { next: (message) => void received.push(message as EventMessage), error: (error) => void failures.push(error), complete: () => {} },
  )
  const pubsub = app.graphql.pubsub as unknown as BoundedPubSub
  t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 1), 'subscribed')
  return { app, received, failures }
}

/** Creates one of Grace's orders, retrying with the same Idempotency-Key while the database is away; returns its global id. */
const createOrder = async (app: FastifyInstance, key: string): Promise<string> =>
  toGlobalId('Order', await createOrderRetrying(app, key, bearer(2, 'orders:write'), 20_000))

/** A session of the test's own on the cluster; a restart ends it, which is expected. */
async function session(t: Test, url: string): Promise<pg.Client> {
  const session = new pg.Client({ connectionString: url })
  session.on('error', () => {})
  await session.connect()
  t.teardown(() => session.end().catch(() => {}))
  return session
}

/**
 * Commits `count` orders whose events wait unrelayed (the test holds the relay's lock), then locks
 * `users` and lets the relay go: resolves once the subscriber's `Order.user` load waits on the lock.
 */
async function eventsStuckOnLockedUsers(t: Test, app: FastifyInstance, url: string, count: number) {
  const admin = await session(t, url)
  const locker = await session(t, url)
  await admin.query('select pg_advisory_lock($1)', [RELAY_LOCK])
  const held: string[] = []
  for (let i = 0; i < count; i++) held.push(await createOrder(app, `held-${i}`))
  await locker.query('begin')
  await locker.query('lock table users in access exclusive mode')
  await admin.query('select pg_advisory_unlock($1)', [RELAY_LOCK])
  const waiting = async () =>
    (
      await admin.query<{ waiting: number }>(
        "select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
      )
    ).rows[0]!.waiting > 0
  const deadline = Date.now() + 10_000
  while (!(await waiting()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(await waiting(), "the relay ran and the subscriber's Order.user load waits on the locked users table")
  return { held, locker }
}

// One cluster for the file; each test has a database of its own in it.
const cluster = SKIP ? undefined : await startPrivateCluster(t)

const orderIds = (received: EventMessage[]) => received.map((message) => message.data?.orderCreated.id)

t.test(
  'across a PostgreSQL restart that cuts an event being resolved, every order created before, during and after arrives exactly once with its data',
  { skip: SKIP },
  async (t) => {
    const { app, received, failures } = await subscribedApp(t, cluster!.url, 5000)
    const { held } = await eventsStuckOnLockedUsers(t, app, cluster!.url, 3)

    // Orders keep being created while the cluster restarts (each retried on 503 with its key).
    let writing = true
    const written: string[] = []
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        written.push(await createOrder(app, `during-${i}`))
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
    })()
    await cluster!.restart()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    writing = false
    await writer
    const after = [await createOrder(app, 'after-0'), await createOrder(app, 'after-1')]
    const created = [...held, ...written, ...after]
    t.ok(written.length >= 3, `${written.length} orders created while the cluster restarted`)

    const all = await eventually(() => created.every((id) => orderIds(received).includes(id)), 20_000)
    t.ok(all, `every created order's event arrived (${received.length} events for ${created.length} orders)`)
    if (!all) t.comment(await cluster!.serverLog())
    t.same(
      received.filter((message) => message.errors !== undefined || !message.data?.orderCreated),
      [],
      'no event arrived without its data',
    )
    t.same(orderIds(received).sort(), [...created].sort(), 'each exactly once, and nothing else')
    t.same(orderIds(received).slice(0, held.length), held, 'the events cut by the restart arrived first, in order')
    t.ok(
      received.every(({ data }) => data?.orderCreated.user.name === 'Grace Hopper' && data.orderCreated.items[0]?.product?.name),
      "each with its related records (the order's user, the items' products)",
    )
    t.same(failures, [], 'the subscription never failed')
  },
)

t.test(
  'an event whose fields stay unresolvable past SUBSCRIPTION_OUTAGE_WAIT arrives in its place with a DATABASE_UNAVAILABLE error naming the event and its order',
  { skip: SKIP },
  async (t) => {
    const url = await cluster!.cloneDatabase()
    // Each statement on the locked table gives up after 200 ms; the event is retried for 1 s.
    const { app, received, failures } = await subscribedApp(t, url, 200, { SUBSCRIPTION_OUTAGE_WAIT: '1s' })
    const { held, locker } = await eventsStuckOnLockedUsers(t, app, url, 1)
    const stuck = Date.now()
    t.ok(await eventually(() => received.length === 1, 10_000), 'the event was delivered while the lock is held')
    const waited = Date.now() - stuck
    await locker.query('rollback')
    const next = await createOrder(app, 'after-lock')
    t.ok(await eventually(() => received.length === 2, 10_000), 'the next event arrives')

    const [unresolved, resolved] = received
    t.equal(unresolved?.data, null, 'the unresolvable event carries no data (orderCreated is non-null)')
    t.match(unresolved?.errors, [
      {
        path: ['orderCreated', 'user'],
        extensions: {
          code: 'DATABASE_UNAVAILABLE',
          reason: 'DATABASE_UNAVAILABLE',
          eventId: /^\d+$/,
          orderId: String(fromGlobalId(held[0]!)?.key),
          userId: '2',
        },
      },
    ])
    t.match(unresolved?.errors?.[0]?.message, /event could not be resolved/)
    // Without retries the error would follow the first statement timeout (200 ms).
    t.ok(waited >= 600, `it was retried for about the outage wait first (${waited} ms from the load waiting to the error)`)
    t.equal(resolved?.data?.orderCreated.id, next, 'the next event has its data: the subscription goes on')
    t.same(failures, [])
  },
)
