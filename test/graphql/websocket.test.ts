/**
 * The subscription transport's lifecycle on a listening instance: admission in connection_init,
 * the initialisation timeout, keep-alive pings and dead peers, unsubscribing, and shutdown.
 */
import t from 'tap'
import { bearer, build, createOrder, tokenFor } from '../helper.ts'
import type { BoundedPubSub } from '../../src/events/pubsub.ts'
import { client, eventually, listening, rawConnection } from './subscription-clients.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

const pubsubOf = (app: Awaited<ReturnType<typeof build>>) => app.graphql.pubsub as unknown as BoundedPubSub

/** The close event a graphql-ws client reports through a subscription's error sink. */
function closeOf(c: ReturnType<typeof client>): Promise<{ code?: number; reason?: string }> {
  return new Promise((resolve) => {
    c.subscribe(
      { query: 'subscription { orderCreated { id } }' },
      {
        next: () => {},
        error: (error) => resolve(error as { code?: number; reason?: string }),
        complete: () => resolve({}),
      },
    )
  })
}

t.test('connection_init: an invalid credential is closed 4403, none at all 4401, never acknowledged', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const url = await listening(app)
  const forbidden = await closeOf(client(t, url, 'not-a-token'))
  t.equal(forbidden.code, 4403)
  t.match(forbidden.reason, /^Forbidden/)
  const unauthorized = await closeOf(client(t, url, undefined))
  t.equal(unauthorized.code, 4401)
  t.match(unauthorized.reason, /connection_init/)
  const expired = await closeOf(client(t, url, tokenFor(2, 'orders:read', -10)))
  t.equal(expired.code, 4403, 'an expired token is refused too')
  t.equal(pubsubOf(app).subscriptionCount('order.created'), 0, 'nothing was subscribed')
})

t.test('a credential on the upgrade request admits a connection whose connection_init carries none', async (t) => {
  const app = await build(t)
  const url = await listening(app)
  const connection = await rawConnection(t, url, { headers: bearer(2, 'orders:read') })
  connection.send({ type: 'connection_init' })
  await connection.next('connection_ack')
  connection.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { orderCreated { id } }' } })
  t.ok(await eventually(() => pubsubOf(app).subscriptionCount('order.created') === 1), 'subscribed')
  const order = (await createOrder(app, [{ sku: 'KB-101', qty: 1 }], bearer(2, 'orders:write'))).json()
  const next = await connection.next('next')
  // Every event carries its id in the log, the `after` a reconnecting client resumes with.
  t.match(next, { type: 'next', id: '1', payload: { extensions: { eventId: /^[1-9][0-9]*$/ } } })
  t.same((next.payload as { data?: unknown }).data, { orderCreated: { id: toGlobalId('Order', order.id) } })
})

t.test('a connection that sends no connection_init in time is closed 4408', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', SUBSCRIPTION_INIT_TIMEOUT: '200ms' } })
  const connection = await rawConnection(t, await listening(app))
  const closed = await connection.closed
  t.equal(closed.code, 4408)
  t.same(connection.messages, [])
})

t.test('the server pings every keep-alive interval and disconnects a peer that stops answering', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', SUBSCRIPTION_KEEPALIVE: '100ms' } })
  const url = await listening(app)
  const responsive = await rawConnection(t, url)
  let pings = 0
  responsive.socket.on('ping', () => pings++)
  // ws answers pings itself unless told not to: this peer never does.
  const silent = await rawConnection(t, url, { autoPong: false })
  await Promise.all([responsive, silent].map((connection) => connection.init(tokenFor(2, 'orders:read'))))
  const silentClosed = await silent.closed
  t.equal(silentClosed.code, 1006, "the silent peer's socket was terminated")
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.ok(pings >= 4, `the answering peer was pinged (${pings} pings)`)
  t.equal(responsive.socket.readyState, responsive.socket.OPEN, 'and stays connected')
})

t.test('unsubscribing and disconnecting release the subscription on the server', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const url = await listening(app)
  const pubsub = pubsubOf(app)
  const c = client(t, url, tokenFor(2, 'orders:read'))
  const unsubscribe = c.subscribe(
    { query: 'subscription { orderCreated { id } }' },
    { next: () => {}, error: () => {}, complete: () => {} },
  )
  c.subscribe({ query: 'subscription { commentAdded(articleId: 1) { id } }' }, { next: () => {}, error: () => {}, complete: () => {} })
  t.ok(
    await eventually(() => pubsub.subscriptionCount('order.created') === 1 && pubsub.subscriptionCount('comment.added') === 1),
    'both subscribed',
  )
  unsubscribe()
  t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 0), 'complete from the client ends that subscription')
  t.equal(pubsub.subscriptionCount('comment.added'), 1, 'and only that one')
  await c.dispose()
  t.ok(await eventually(() => pubsub.subscriptionCount('comment.added') === 0), 'a closed connection ends the rest')
})

t.test('shutdown closes subscribers with 1001 Going Away, and does not wait on one that stopped reading', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const url = await listening(app)
  const reading = await rawConnection(t, url)
  const stalled = await rawConnection(t, url)
  await Promise.all([reading, stalled].map((connection) => connection.init(tokenFor(2, 'orders:read'))))
  stalled.socket.pause()
  await app.close()
  t.same(await reading.closed, { code: 1001, reason: 'Server shutting down' })
  t.pass('close finished although one peer never answered the closing handshake')
  stalled.socket.resume()
  t.equal((await stalled.closed).code, 1001, 'which reads 1001 once it reads again')
})
