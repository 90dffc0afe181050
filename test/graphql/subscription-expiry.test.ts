/**
 * A subscription lives no longer than its credential (decisions §12): at the token's `exp` the
 * connection is closed with 4403 "token expired", and its timer goes with the socket.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build, tokenFor } from '../helper.ts'
import type { BoundedPubSub } from '../../src/events/pubsub.ts'
import { client, eventually, listening, rawConnection, type RawConnection, createOrderNode } from './subscription-clients.ts'

const ORDER_CREATED = 'subscription { orderCreated { id } }'

const pubsubOf = (app: FastifyInstance) => app.graphql.pubsub as unknown as BoundedPubSub

const received = (connection: RawConnection, orderId: string) =>
  connection.messages.some(
    (m) => m.type === 'next' && (m.payload as { data: { orderCreated: { id: string } } }).data.orderCreated.id === orderId,
  )

/** The token's `exp`, in milliseconds. */
const expiryOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000

t.test(
  'at its token\'s exp a connection is closed 4403 "token expired", and an event committed afterwards does not reach it',
  async (t) => {
    const app = await build(t)
    const pubsub = pubsubOf(app)
    const url = await listening(app)
    const token = tokenFor(2, 'orders:read', 3)
    const expiring = await rawConnection(t, url)
    await expiring.init(token)
    expiring.send({ id: '1', type: 'subscribe', payload: { query: ORDER_CREATED } })
    // An application's client with a long-lived token, on the same instance, for comparison.
    const lasting: string[] = []
    client(t, url, tokenFor(2, 'orders:read')).subscribe(
      { query: ORDER_CREATED },
      {
        next: (value) => lasting.push((value.data as { orderCreated: { id: string } }).orderCreated.id),
        error: () => {},
        complete: () => {},
      },
    )
    t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 2), 'both subscribed')

    const before = await createOrderNode(app)
    t.ok(await eventually(() => received(expiring, before)), 'before exp the subscription receives events')

    const closed = await expiring.closed
    const closedAt = Date.now()
    t.same(closed, { code: 4403, reason: 'token expired' })
    t.ok(closedAt >= expiryOf(token) - 50, 'not before the token expired')
    t.ok(closedAt < expiryOf(token) + 5000, `within a few seconds of exp (${closedAt - expiryOf(token)} ms after)`)
    t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 1), 'its subscription ended on the server')

    const after = await createOrderNode(app)
    t.ok(await eventually(() => lasting.includes(after)), 'the event committed after exp is delivered to the other connection')
    t.notOk(received(expiring, after), 'but not to the expired one')
    t.same(lasting, [before, after])
  },
)

t.test('a token valid for longer than a timer can wait (30 days) keeps its connection open', async (t) => {
  // Such a token is refused by default (JWT_MAX_LIFETIME, 24 h): this server accepts 31 days.
  const app = await build(t, { env: { JWT_MAX_LIFETIME: '744h' } })
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(2, 'orders:read', 30 * 24 * 3600))
  connection.send({ id: '1', type: 'subscribe', payload: { query: ORDER_CREATED } })
  t.ok(await eventually(() => pubsubOf(app).subscriptionCount('order.created') === 1))
  await new Promise((resolve) => setTimeout(resolve, 300))
  const order = await createOrderNode(app)
  t.ok(await eventually(() => received(connection, order)), 'the subscription receives')
  t.equal(connection.socket.readyState, connection.socket.OPEN, 'and the connection is open')
})

t.test('a connection that closes first takes its expiry timer with it', async (t) => {
  // One caller holds the 20 connections: above the default of 10 per caller.
  const app = await build(t, { env: { EVENTS_RELAY: 'false', SUBSCRIPTION_MAX_CONNECTIONS_PER_CALLER: '20' } })
  const url = await listening(app)
  const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length
  const baseline = timers()
  const connections = await Promise.all(Array.from({ length: 20 }, () => rawConnection(t, url)))
  // Admission clears each connection's initialisation timer and starts its expiry timer.
  await Promise.all(connections.map((connection) => connection.init(tokenFor(2, 'orders:read'))))
  const admitted = timers()
  t.ok(admitted >= baseline + 20, `20 admitted connections: ${admitted} timers, ${baseline} before`)
  for (const connection of connections) connection.socket.close()
  t.ok(await eventually(() => app.websocketServer.clients.size === 0), 'the server saw every connection close')
  t.ok(await eventually(() => timers() <= baseline + 2), `after the closes ${timers()} timers are left: the expiry timers were cleared`)
})
