/**
 * Limits per caller, not only per connection (decisions §13): on one instance a caller (token
 * subject) holds at most SUBSCRIPTION_MAX_CONNECTIONS_PER_CALLER (10) WebSocket connections and
 * SUBSCRIPTION_MAX_PER_CALLER (200) active subscriptions across them. The 11th connection is closed
 * at connection_init with 4430; the 201st subscribe gets an error on its own id. Other callers are
 * not affected, and every slot is given back exactly once, however an operation or a socket ends.
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { setTimeout } from 'node:timers/promises'
import type { CloseEvent } from 'ws'
import { build, tokenFor } from '../helper.ts'
import { client, eventually, listening, rawConnection, subscriptionCount, type RawConnection } from './subscription-clients.ts'

const ORDER_CREATED = 'subscription { orderCreated { id } }'
/** Operation ids `prefix0` … `prefix<count - 1>`. */
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
const subscribe = (connection: RawConnection, id: string) => connection.send({ id, type: 'subscribe', payload: { query: ORDER_CREATED } })

/** The server's `error` or `complete` on operation `id`, once it came. */
async function endOf(connection: RawConnection, id: string) {
  await eventually(() => connection.messages.some((m) => m.id === id && (m.type === 'error' || m.type === 'complete')), 10_000)
  return connection.messages.find((m) => m.id === id && (m.type === 'error' || m.type === 'complete'))
}
/** How the server answers a connection_init: the close, or 'acknowledged'. */
const closeOrAck = (connection: RawConnection) =>
  Promise.race([connection.closed, connection.next('connection_ack').then(() => 'acknowledged')])
const extensionsOf = (message: { payload?: unknown } | undefined) =>
  (message?.payload as Array<{ message?: string; extensions?: Record<string, unknown> }> | undefined)?.[0]

/** Subscribes `operationIds` on `connection` and waits until the server holds `total` subscriptions. */
async function subscribeAll(t: Test, app: FastifyInstance, connection: RawConnection, operationIds: string[], total: number) {
  for (const id of operationIds) subscribe(connection, id)
  t.ok(await eventually(() => subscriptionCount(app, 'order.created') === total, 20_000), `the server holds ${total} subscriptions`)
}

t.test(
  'the 11th connection of one caller is closed with 4430 at connection_init, another caller still connects, and a closed connection makes room',
  async (t) => {
    const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
    const url = await listening(app)
    const grace = tokenFor(2, 'orders:read')
    const ten = await Promise.all(Array.from({ length: 10 }, () => rawConnection(t, url)))
    await Promise.all(ten.map((connection) => connection.init(grace)))

    const eleventh = await rawConnection(t, url)
    eleventh.send({ type: 'connection_init', payload: { Authorization: `Bearer ${grace}` } })
    t.same(await closeOrAck(eleventh), { code: 4430, reason: 'Too many connections for this caller' }, 'closed with 4430 and its reason')
    t.notOk(
      eleventh.messages.some((m) => m.type === 'connection_ack'),
      'never acknowledged',
    )

    // What an application sees: graphql-ws hands the close event to the subscription's error sink.
    const refused = await Promise.race([
      new Promise<CloseEvent>((resolve) => {
        client(t, url, grace).subscribe(
          { query: ORDER_CREATED },
          { next: () => {}, error: (error) => resolve(error as CloseEvent), complete: () => {} },
        )
      }),
      setTimeout(5000, 'no error within 5 s'),
    ])
    t.match(refused, { code: 4430, reason: 'Too many connections for this caller' }, 'graphql-ws reports the code and reason')

    const alan = await rawConnection(t, url)
    await alan.init(tokenFor(3, 'orders:read'))
    t.pass('another caller connects')
    for (const connection of ten) t.equal(connection.socket.readyState, connection.socket.OPEN, "the caller's ten stay open")

    // A socket cut without a closing handshake gives its connection back, once.
    const open = app.websocketServer.clients.size
    ten[0]!.socket.terminate()
    t.ok(await eventually(() => app.websocketServer.clients.size === open - 1), 'the server saw the cut')
    const replacement = await rawConnection(t, url)
    await replacement.init(grace)
    t.pass('after one of them was cut, the caller connects again')
    const twelfth = await rawConnection(t, url)
    twelfth.send({ type: 'connection_init', payload: { Authorization: `Bearer ${grace}` } })
    t.match(await closeOrAck(twelfth), { code: 4430 }, 'and is at its limit again: the cut connection was given back once')
  },
)

t.test(
  "the 201st active subscription of one caller, on any of its connections, gets an error on its id; another caller's go on",
  async (t) => {
    const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
    const url = await listening(app)
    const grace = tokenFor(2, 'orders:read')
    const [first, second, third] = await Promise.all([rawConnection(t, url), rawConnection(t, url), rawConnection(t, url)])
    for (const connection of [first!, second!, third!]) await connection.init(grace)
    await subscribeAll(t, app, first!, ids('a', 100), 100)
    await subscribeAll(t, app, second!, ids('b', 100), 200)

    subscribe(third!, 'c0')
    const refusal = await endOf(third!, 'c0')
    t.equal(refusal?.type, 'error', 'the 201st subscribe, on a connection that carries none, is answered with an error on its id')
    t.match(extensionsOf(refusal), {
      message: /200 active subscriptions/,
      extensions: { code: 'BAD_REQUEST', reason: 'TOO_MANY_SUBSCRIPTIONS', limit: 200, per: 'caller' },
    })
    t.equal(third!.socket.readyState, third!.socket.OPEN, 'the connection stays open')

    const alan = await rawConnection(t, url)
    await alan.init(tokenFor(3, 'orders:read'))
    subscribe(alan, 'x')
    t.ok(await eventually(() => subscriptionCount(app, 'order.created') === 201), "another caller's subscribe is taken")
    t.notOk(
      alan.messages.some((m) => m.type === 'error'),
      'and not refused',
    )

    first!.send({ id: 'a0', type: 'complete' })
    t.equal((await endOf(first!, 'a0'))?.type, 'complete')
    subscribe(third!, 'c1')
    subscribe(third!, 'c2')
    t.match(extensionsOf(await endOf(third!, 'c2')), { extensions: { per: 'caller' } }, 'a completed subscription made room for one')
    t.notOk(
      third!.messages.some((m) => m.id === 'c1'),
      'c1 took it',
    )
  },
)

t.test('slots come back exactly once whichever way operations and sockets end (limits of 3 per connection, 4 per caller)', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', SUBSCRIPTION_MAX_PER_CONNECTION: '3', SUBSCRIPTION_MAX_PER_CALLER: '4' } })
  const url = await listening(app)
  const grace = tokenFor(2, 'orders:read')
  const count = () => subscriptionCount(app, 'order.created')
  const [a, b] = await Promise.all([rawConnection(t, url), rawConnection(t, url)])
  await a!.init(grace)
  await b!.init(grace)
  await subscribeAll(t, app, a!, ['a1', 'a2', 'a3'], 3)
  subscribe(a!, 'a4')
  t.match(extensionsOf(await endOf(a!, 'a4')), { extensions: { per: 'connection', limit: 3 } }, 'a fourth on one connection: its own limit')
  await subscribeAll(t, app, b!, ['b1'], 4)
  subscribe(b!, 'b2')
  t.match(extensionsOf(await endOf(b!, 'b2')), { extensions: { per: 'caller', limit: 4 } }, "a fifth of the caller's: the caller's limit")

  // A client's complete sent twice frees one slot.
  b!.send({ id: 'b1', type: 'complete' })
  b!.send({ id: 'b1', type: 'complete' })
  await endOf(b!, 'b1')
  subscribe(b!, 'b3')
  subscribe(b!, 'b4')
  t.match(extensionsOf(await endOf(b!, 'b4')), { extensions: { per: 'caller' } }, 'one slot came back, not two')
  t.equal(count(), 4)

  // A cut socket gives back its three, once.
  a!.socket.terminate()
  t.ok(await eventually(() => count() === 1), "the cut connection's subscriptions ended")
  const c = await rawConnection(t, url)
  await c.init(grace)
  await subscribeAll(t, app, c, ['c1', 'c2', 'c3'], 4)
  subscribe(b!, 'b5')
  t.match(extensionsOf(await endOf(b!, 'b5')), { extensions: { per: 'caller' } }, 'three came back, not more')

  // A clean close too; then the caller holds nothing and starts afresh.
  b!.socket.close()
  c.socket.close()
  t.ok(await eventually(() => count() === 0))
  const d = await rawConnection(t, url)
  await d.init(grace)
  await subscribeAll(t, app, d, ['d1', 'd2', 'd3'], 3)
  t.notOk(
    d.messages.some((m) => m.type === 'error'),
    'a fresh connection takes its three',
  )
})
