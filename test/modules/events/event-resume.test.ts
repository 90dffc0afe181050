/**
 * Streams and subscriptions cut mid-flow resume after the last id they received with exactly the
 * events they missed, then live ones, none twice: on the same instance and on another one of the
 * same database.
 */
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { createDatabase } from '../../../src/db/database.ts'
import { bearer, build, createTestDatabase, tokenFor } from '../../helper.ts'
import { client } from '../../graphql/subscription-clients.ts'
import { GRACE, newOrder, scopes, serve, subscribe } from './event-helpers.ts'
import { openStream } from './sse-client.ts'

/** A stream cut after two of its events, resumed with Last-Event-ID on `resumeOn`: exactly the missed events, then live ones. */
async function streamResumes(t: Test, writer: FastifyInstance, first: string, resumeOn: string) {
  const headers = bearer(GRACE)
  const stream = await openStream(first, '/api/v1/events/stream', headers)
  t.equal(stream.status, 200)
  await sleep(200)
  const [a, b] = [await newOrder(writer, GRACE), await newOrder(writer, GRACE)]
  const before = await stream.waitFor(2)
  t.same(
    before.map((message) => message.data.data.id),
    [a.id, b.id],
  )
  stream.cut()
  const [c, d] = [await newOrder(writer, GRACE), await newOrder(writer, GRACE)]
  const resumed = await openStream(resumeOn, '/api/v1/events/stream', { ...headers, 'last-event-id': before[1]!.id })
  t.equal(resumed.status, 200)
  const missed = await resumed.waitFor(2)
  t.same(
    missed.map((message) => message.data.data.id),
    [c.id, d.id],
    'exactly the missed events',
  )
  const e = await newOrder(writer, GRACE)
  const live = await resumed.waitFor(3)
  t.same(
    live.map((message) => message.data.data.id),
    [c.id, d.id, e.id],
    'then live, none twice',
  )
  resumed.cut()
}

/** A subscription that received one event, resubscribed with `after` on `resumeOn`: exactly the missed ones, then live ones. */
async function subscriptionResumes(t: Test, writer: FastifyInstance, first: string, resumeOn: string) {
  const token = tokenFor(GRACE, scopes[GRACE])
  const c1 = client(t, first, token)
  const before = subscribe(c1, 'subscription { orderCreated { databaseId } }')
  await sleep(500)
  const a = await newOrder(writer, GRACE)
  const [lastId] = await before.waitFor(1)
  t.same(
    before.received.map((event) => event.data.orderCreated!.databaseId),
    [a.id],
  )
  before.unsubscribe()
  await sleep(100)
  const [b, c] = [await newOrder(writer, GRACE), await newOrder(writer, GRACE)]
  const c2 = client(t, resumeOn, token)
  const after = subscribe(c2, `subscription { orderCreated(after: "${lastId}") { databaseId } }`)
  await after.waitFor(2)
  await sleep(300)
  const d = await newOrder(writer, GRACE)
  await after.waitFor(3)
  await sleep(300)
  t.same(
    after.received.map((event) => event.data.orderCreated!.databaseId),
    [b.id, c.id, d.id],
    'the missed events, then live, none twice',
  )
  t.same(after.errors, [])
}

t.test('a stream and a subscription cut mid-flow resume with the last id: exactly the missed events', async (t) => {
  const app = await build(t)
  const { ws, http } = await serve(app)
  await t.test('stream', (t) => streamResumes(t, app, http, http))
  await t.test('subscription', (t) => subscriptionResumes(t, app, ws, ws))
})

t.test(
  'resuming on another instance of the same database',
  { skip: process.env.DATABASE_URL ? false : 'PGlite is one process' },
  async (t) => {
    const database = await createTestDatabase(t)
    const other = await createDatabase({ url: database.url!, poolSize: 5 })
    t.teardown(() => other.close())
    const a = await build(t, { database })
    const b = await build(t, { database: other })
    const [onA, onB] = [await serve(a), await serve(b)]
    await t.test('stream', (t) => streamResumes(t, a, onA.http, onB.http))
    await t.test('subscription', (t) => subscriptionResumes(t, a, onA.ws, onB.ws))
  },
)
