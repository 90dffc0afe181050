/**
 * One WebSocket carries at most SUBSCRIPTION_MAX_PER_CONNECTION active subscriptions (decisions
 * §12): a further subscribe gets an error on its own id, the connection and its other subscriptions
 * go on, and an operation frees its slot exactly once however it ends.
 */
import t from 'tap'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { FastifyInstance } from 'fastify'
import { build, tokenFor } from '../helper.ts'
import type { BoundedPubSub } from '../../src/events/pubsub.ts'
import { eventually, listening, rawConnection, type RawConnection, createOrderNode } from './subscription-clients.ts'

setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

const ORDER_CREATED = 'subscription { orderCreated { id } }'
/** Fails in its resolver, after Mercurius has set the subscription up: articleId is not an id. */
const FAILING = 'subscription { commentAdded(articleId: "x") { id } }'

const pubsubOf = (app: FastifyInstance) => app.graphql.pubsub as unknown as BoundedPubSub

/** Ids of the operations that received the `next` of order `orderId`. */
function receivers(connection: RawConnection, orderId: string): string[] {
  return connection.messages
    .filter((m) => m.type === 'next' && (m.payload as { data?: { orderCreated?: { id?: string } } }).data?.orderCreated?.id === orderId)
    .map((m) => m.id!)
    .sort()
}

/** Waits for the server's `error` or `complete` on operation `id` and returns it. */
async function endOf(connection: RawConnection, id: string) {
  await eventually(() => connection.messages.some((m) => m.id === id && (m.type === 'error' || m.type === 'complete')), 10_000)
  return connection.messages.find((m) => m.id === id && (m.type === 'error' || m.type === 'complete'))
}

const subscribe = (connection: RawConnection, id: string, query = ORDER_CREATED) =>
  connection.send({ id, type: 'subscribe', payload: { query } })
const errorCode = (message: { payload?: unknown } | undefined) =>
  (message?.payload as Array<{ extensions?: { code?: string; reason?: string } }> | undefined)?.[0]?.extensions

t.test(
  'at the default of 100, the 101st subscribe on one socket gets an error on its id while the 100 others receive; completing one makes room',
  async (t) => {
    const app = await build(t)
    const pubsub = pubsubOf(app)
    const connection = await rawConnection(t, await listening(app))
    await connection.init(tokenFor(2, 'orders:read'))
    const ids = Array.from({ length: 101 }, (_, i) => `s${String(i + 1).padStart(3, '0')}`)
    for (const id of ids) subscribe(connection, id)

    const refusal = await endOf(connection, 's101')
    t.equal(refusal?.type, 'error', 'the 101st subscribe is answered with an error message on its own id')
    t.match(refusal?.payload, [
      { message: /100 subscriptions/, extensions: { code: 'BAD_REQUEST', reason: 'TOO_MANY_SUBSCRIPTIONS', limit: 100 } },
    ])
    t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 100), 'the server holds 100 subscriptions')

    const first = await createOrderNode(app)
    t.ok(await eventually(() => receivers(connection, first).length === 100, 10_000), 'an event reaches the 100 subscriptions')
    t.same(receivers(connection, first), ids.slice(0, 100), 'every one of them, and not the refused one')
    t.equal(connection.messages.filter((m) => m.type === 'error').length, 1, 'only the 101st was refused')
    t.equal(connection.socket.readyState, connection.socket.OPEN, 'the connection stays open')

    connection.send({ id: 's001', type: 'complete' })
    t.equal((await endOf(connection, 's001'))?.type, 'complete', 'the server completes s001')
    subscribe(connection, 's102')
    t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 100), 'a new subscribe takes the freed slot')
    const second = await createOrderNode(app)
    t.ok(await eventually(() => receivers(connection, second).length === 100, 10_000))
    t.same(receivers(connection, second), [...ids.slice(1, 100), 's102'], 's102 receives, the completed s001 does not')
    t.notOk(
      connection.messages.some((m) => m.id === 's102' && m.type === 'error'),
      's102 was not refused',
    )
  },
)

t.test('every way an operation ends frees its slot exactly once: complete (also sent twice), a resolver error, a refusal', async (t) => {
  const app = await build(t, { env: { SUBSCRIPTION_MAX_PER_CONNECTION: '2' } })
  const pubsub = pubsubOf(app)
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(2, 'orders:read'))

  subscribe(connection, 'a')
  subscribe(connection, 'b')
  subscribe(connection, 'c')
  t.match(errorCode(await endOf(connection, 'c')), { code: 'BAD_REQUEST', reason: 'TOO_MANY_SUBSCRIPTIONS' }, 'the third is refused')
  t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 2))

  // A client's complete, sent twice, frees one slot: one new subscribe fits, the next does not.
  connection.send({ id: 'a', type: 'complete' })
  connection.send({ id: 'a', type: 'complete' })
  t.equal((await endOf(connection, 'a'))?.type, 'complete')
  subscribe(connection, 'd')
  subscribe(connection, 'e')
  t.match(
    errorCode(await endOf(connection, 'e')),
    { reason: 'TOO_MANY_SUBSCRIPTIONS' },
    'e is refused: completing a twice freed one slot, the refusal of c none',
  )
  t.equal(connection.messages.filter((m) => m.id === 'd').length, 0, 'd was accepted')

  // One slot left after completing b: a subscribe that fails in its resolver takes it and gives it
  // back, so a second failing one fails for its own reason, not for the limit.
  connection.send({ id: 'b', type: 'complete' })
  await endOf(connection, 'b')
  subscribe(connection, 'f1', FAILING)
  t.match(errorCode(await endOf(connection, 'f1')), { code: 'BAD_USER_INPUT' }, 'f1 fails in its resolver')
  subscribe(connection, 'f2', FAILING)
  t.match(errorCode(await endOf(connection, 'f2')), { code: 'BAD_USER_INPUT' }, "f2 too: f1's error freed its slot")
  subscribe(connection, 'f3', 'subscription { noSuchField }')
  t.notMatch(errorCode(await endOf(connection, 'f3')), { reason: 'TOO_MANY_SUBSCRIPTIONS' }, 'an unknown field fails for its own reason')
  subscribe(connection, 'g')
  subscribe(connection, 'h')
  t.match(errorCode(await endOf(connection, 'h')), { reason: 'TOO_MANY_SUBSCRIPTIONS' }, 'g took the last slot, h is refused')

  const order = await createOrderNode(app)
  t.ok(await eventually(() => receivers(connection, order).length === 2, 10_000))
  t.same(receivers(connection, order), ['d', 'g'], 'the two live subscriptions receive')
  t.equal(pubsub.subscriptionCount('order.created'), 2)
})

t.test('a subscribe the client completes straight away does not keep a slot', async (t) => {
  const app = await build(t, { env: { SUBSCRIPTION_MAX_PER_CONNECTION: '2' } })
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(2, 'orders:read'))
  // Sent in one go, each complete reaches the server before Mercurius has started its subscribe.
  for (let i = 0; i < 20; i++) {
    subscribe(connection, `r${i}`)
    connection.send({ id: `r${i}`, type: 'complete' })
  }
  for (let i = 0; i < 20; i++) t.ok(await endOf(connection, `r${i}`), `r${i} ended on the server`)
  subscribe(connection, 'x')
  subscribe(connection, 'y')
  subscribe(connection, 'z')
  t.match(errorCode(await endOf(connection, 'z')), { reason: 'TOO_MANY_SUBSCRIPTIONS' }, 'only z is refused')
  const order = await createOrderNode(app)
  t.ok(await eventually(() => receivers(connection, order).length === 2, 10_000))
  t.same(receivers(connection, order), ['x', 'y'], 'x and y are live; no r subscription is')
})

t.test('subscribes that fail leave nothing behind on the server while the connection stays open', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(2, 'orders:read'))
  const heapAfterGc = () => {
    collectGarbage()
    collectGarbage()
    return process.memoryUsage().heapUsed
  }
  const errors = () => connection.messages.filter((m) => m.type === 'error').length
  // In batches of 100, so that each one is started (none is refused for the limit).
  let sent = 0
  const failBatches = async (batches: number) => {
    for (let batch = 0; batch < batches; batch++) {
      for (let i = 0; i < 100; i++) subscribe(connection, `f${sent++}`, FAILING)
      await eventually(() => errors() === sent, 10_000)
    }
  }
  await failBatches(2)
  const before = heapAfterGc()
  await failBatches(50)
  t.equal(errors(), 5200, 'every one failed')
  t.ok(
    connection.messages.every((m) => m.type !== 'error' || errorCode(m)?.code === 'BAD_USER_INPUT'),
    'each one failed in its resolver',
  )
  // Mercurius alone keeps about 8 kB per failed subscription until the connection closes (~40 MB here).
  const growth = heapAfterGc() - before
  t.ok(growth < 12 * 1024 * 1024, `heap grew ${(growth / 1024 / 1024).toFixed(1)} MB over 5000 failed subscribes`)
  t.equal(connection.socket.readyState, connection.socket.OPEN)
})

t.test("the protocol's own refusals: a reused id is closed 4409, a query that is not a string 4400", async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const pubsub = pubsubOf(app)
  const url = await listening(app)

  const reusing = await rawConnection(t, url)
  await reusing.init(tokenFor(2, 'orders:read'))
  subscribe(reusing, '1')
  t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 1))
  subscribe(reusing, '1')
  t.same(await reusing.closed, { code: 4409, reason: 'Subscriber for 1 already exists' })

  // Mercurius runs a query sent as a parsed document without the hook that counts subscriptions.
  const objectQuery = await rawConnection(t, url)
  await objectQuery.init(tokenFor(2, 'orders:read'))
  objectQuery.send({ id: '1', type: 'subscribe', payload: { query: { kind: 'Document', definitions: [] } } })
  t.same(await objectQuery.closed, { code: 4400, reason: 'Invalid message received' })
  t.ok(await eventually(() => pubsub.subscriptionCount('order.created') === 0), 'nothing is left subscribed')
})
