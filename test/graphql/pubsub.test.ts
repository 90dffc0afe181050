/**
 * A subscriber that stops reading must not make the server hold its events without bound.
 *
 * Events are published straight into the instance's pubsub (the part under test): thousands of
 * large events through the outbox would make the test slow without exercising anything more.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { build, tokenFor } from '../helper.ts'
import { SLOW_SUBSCRIBER_CLOSE_CODE, type BoundedPubSub } from '../../src/events/pubsub.ts'
import { eventually, listening, rawConnection } from './subscription-clients.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

function heapUsedAfterGc(): number {
  collectGarbage()
  collectGarbage()
  return process.memoryUsage().heapUsed
}

/** An order event whose 100 items carry 200 fresh characters each: about 30 kB of heap apiece. */
function bulkyOrderEvent(id: number) {
  const items = Array.from({ length: 100 }, () => ({ sku: randomBytes(100).toString('hex'), qty: 1, unit_price: 100 }))
  const order = {
    id,
    user_id: 2,
    status: 'pending',
    total: 10_000,
    items,
    created_at: '2026-01-05T09:00:00.000Z',
    updated_at: '2026-01-05T09:00:00.000Z',
  }
  return { topic: 'order.created', payload: { orderId: id, userId: 2, order } }
}

/** A listening instance with one graphql-transport-ws connection subscribed to `query` as Grace. */
async function subscribedConnection(t: Parameters<typeof build>[0], queueLimit: number, query: string) {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', SUBSCRIPTION_QUEUE_LIMIT: String(queueLimit) } })
  const pubsub = app.graphql.pubsub as unknown as BoundedPubSub
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(2, 'orders:read'))
  connection.send({ id: '1', type: 'subscribe', payload: { query } })
  return { pubsub, connection, subscribed: await eventually(() => pubsub.subscriptionCount('order.created') === 1) }
}

t.test('a subscriber that stops reading is disconnected with 1013 once its queue is full; server memory stays flat', async (t) => {
  const { pubsub, connection, subscribed } = await subscribedConnection(t, 50, 'subscription { orderCreated { id items { sku } } }')
  t.ok(subscribed, 'subscribed')

  // The client stops reading: the kernel's socket buffers fill, then the server's send loop stalls.
  connection.socket.pause()
  const before = heapUsedAfterGc()
  const published = 4000
  for (let id = 1; id <= published; id++) {
    await pubsub.publish(bulkyOrderEvent(id))
    // Let the send loop run between publications, as it would between real commits.
    if (id % 20 === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  const growth = heapUsedAfterGc() - before
  t.ok(
    growth < 40 * 1024 * 1024,
    `heap grew ${(growth / 1024 / 1024).toFixed(1)} MB while ~${Math.round((published * 30) / 1024)} MB of events were published`,
  )
  t.equal(pubsub.subscriptionCount('order.created'), 0, 'the slow subscription was dropped')

  connection.socket.resume()
  const closed = await connection.closed
  t.equal(closed.code, SLOW_SUBSCRIBER_CLOSE_CODE, 'closed with 1013 Try Again Later')
  t.match(closed.reason, /too slow/)
  const delivered = connection.messages.filter((m) => m.type === 'next')
  t.ok(delivered.length > 0 && delivered.length < published, `${delivered.length} of ${published} events reached it before it fell behind`)
  t.same(
    delivered.map((m) => (m.payload as { data: { orderCreated: { id: string } } }).data.orderCreated.id),
    delivered.map((_, index) => toGlobalId('Order', index + 1)),
    'what it did receive is a gap-free prefix, in order',
  )
})

t.test('a subscriber that keeps up is never cut off: the bound is on backlog, not on volume', async (t) => {
  const { pubsub, connection, subscribed } = await subscribedConnection(t, 50, 'subscription { orderCreated { id } }')
  t.ok(subscribed, 'subscribed')
  // Bursts of 40 (the limit is 50), each read before the next: 2000 events, 40 times the limit.
  for (let id = 1; id <= 2000; id++) {
    await pubsub.publish({ topic: 'order.created', payload: { orderId: id, userId: 2, order: { id } } })
    if (id % 40 === 0 && !(await eventually(() => connection.messages.length > id))) break
  }
  t.equal(connection.messages.filter((m) => m.type === 'next').length, 2000, 'all 2000 events arrived')
  t.equal(connection.socket.readyState, connection.socket.OPEN, 'and the connection is open')
})
