/**
 * The event log across a PostgreSQL restart: a stream and a subscription, both live and
 * both cut before the restart, resume after it with the last id each received and get exactly the
 * events committed meanwhile. On a cluster of this test's own.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { createDatabase } from '../../src/db/database.ts'
import { bearer, build, tokenFor } from '../helper.ts'
import { client } from '../graphql/subscription-clients.ts'
import { GRACE, scopes, serve, subscribe } from '../modules/events/event-helpers.ts'
import { openStream, type SseStream } from '../modules/events/sse-client.ts'
import { postgresUrl } from '../setup/templates.ts'
import { privateClusterUnavailable, startPrivateCluster } from './private-cluster.ts'
import { createOrderRetrying } from './retrying-create.ts'

const SKIP = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set); it starts a cluster of its own'
  : process.env.CI
    ? false
    : (privateClusterUnavailable() ?? false)

/** One of Grace's orders, retried with the same Idempotency-Key while the database is away. */
const createOrder = (app: FastifyInstance, key: string) => createOrderRetrying(app, key, bearer(GRACE), 30_000)

/** Opens a stream, again while the server answers 503 (its database is still coming back). */
async function openWhenReady(base: string, headers: Record<string, string>): Promise<SseStream> {
  for (let attempt = 0; ; attempt++) {
    const stream = await openStream(base, '/api/v1/events/stream', headers)
    if (stream.status !== 503 || attempt > 200) return stream
    await sleep(50)
  }
}

t.test('a stream and a subscription resume across a PostgreSQL restart with exactly the missed events', { skip: SKIP }, async (t) => {
  const cluster = await startPrivateCluster(t)
  const url = await cluster.cloneDatabase()
  const database = await createDatabase({ url, poolSize: 5, logger: { warn: () => {} } })
  t.teardown(() => database.close())
  const app = await build(t, { database })
  const { ws, http } = await serve(app)

  const stream = await openStream(http, '/api/v1/events/stream', bearer(GRACE))
  t.equal(stream.status, 200)
  const token = tokenFor(GRACE, scopes[GRACE])
  const live = client(t, ws, token)
  const before = subscribe(live, 'subscription { orderCreated { databaseId } }')
  await sleep(500)
  const first = await createOrder(app, 'restart-a')
  const [received] = await stream.waitFor(1)
  t.equal(received!.data.data.id, first)
  const lastId = received!.id
  stream.cut()
  const [lastEventId] = await before.waitFor(1)
  t.same(
    before.received.map((event) => Number(event.data.orderCreated!.databaseId)),
    [first],
    'the subscription received the same event live',
  )
  t.equal(lastEventId, lastId, 'with the same event id')
  await live.dispose()

  await cluster.restart()
  const missed = [await createOrder(app, 'restart-b'), await createOrder(app, 'restart-c')]

  const resumed = await openWhenReady(http, { ...bearer(GRACE), 'last-event-id': lastId })
  t.equal(resumed.status, 200)
  t.same(
    (await resumed.waitFor(2)).map((message) => message.data.data.id),
    missed,
    'the stream: exactly the events committed while it was away',
  )
  const subscription = subscribe(client(t, ws, token), `subscription { orderCreated(after: "${lastEventId}") { databaseId } }`)
  await subscription.waitFor(2)
  await sleep(300)
  t.same(
    subscription.received.map((event) => Number(event.data.orderCreated!.databaseId)),
    missed,
    'the subscription, resumed with its own last id: the same events',
  )
  t.same(subscription.errors, [])
  resumed.cut()
})
