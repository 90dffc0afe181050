/**
 * Every committed event reaches a subscriber once, in delivery (seq) order, however the
 * transactions that wrote them interleave (decisions §12): concurrent writers whose commits land
 * out of id order, a transaction that commits after a later one was already relayed, and
 * instances with and without Redis on one database.
 */
import t, { type Test } from 'tap'
import { createDatabase } from '../../src/db/database.ts'
import type { Caller } from '../../src/auth/caller.ts'
import { bearer, reachableRedis } from '../helper.ts'
import { eventually } from '../graphql/subscription-clients.ts'
import { createOrders, customer, duplicates, onPostgres, relayedOrderIds, settle, twoInstances, watchOrders } from './event-delivery-fixtures.ts'

const ORDERS = 400
const CONCURRENCY = 16

/** 400 orders through A at concurrency 16, an admin watching on B. */
async function deliveredUnderConcurrency(t: Test, env: { a?: Record<string, string>; b?: Record<string, string> }) {
  const relaxed = { RATE_LIMIT_MAX: '1000000' }
  const { a, b, database } = await twoInstances(t, { a: { ...relaxed, ...env.a }, b: { ...relaxed, ...env.b } })
  const watcher = await watchOrders(t, b)
  // B keeps up with the burst: it never reports itself unable to deliver meanwhile.
  const unavailable = new Set<string>()
  const sampler = setInterval(() => {
    const reason = b.eventDelivery.unavailable()
    if (reason) unavailable.add(reason.replace(/\d+ ms/, 'N ms'))
  }, 50)
  t.teardown(() => clearInterval(sampler))
  const created = await createOrders(a, await customer(database), ORDERS, CONCURRENCY)
  t.same([...new Set(created.statuses)], [201], `all ${ORDERS} orders were created`)
  await watcher.received(ORDERS, 60_000)
  clearInterval(sampler)
  t.same([...unavailable], [], 'B stayed ready throughout')
  await settle()
  t.comment(`delivered ${new Set(watcher.ids).size}/${ORDERS} (${watcher.ids.length} received)`)
  t.same(watcher.errors, [])
  t.same(duplicates(watcher.ids), [], 'none twice')
  t.same([...watcher.ids].sort(), [...created.ids].sort(), `all ${ORDERS}, nothing else`)
  t.same(watcher.ids, await relayedOrderIds(database), 'in the outbox\'s delivery order')
}

t.test(`${ORDERS} orders created ${CONCURRENCY} at a time on A all reach a subscriber on B once, in order (NOTIFY)`, async (t) => {
  await deliveredUnderConcurrency(t, {})
})

t.test('the same when A has Redis and B has not', async (t) => {
  const redisUrl = await reachableRedis(t)
  if (!redisUrl) return
  await deliveredUnderConcurrency(t, { a: { REDIS_URL: redisUrl } })
})

t.test('the same when B has Redis and A has not', async (t) => {
  const redisUrl = await reachableRedis(t)
  if (!redisUrl) return
  await deliveredUnderConcurrency(t, { b: { REDIS_URL: redisUrl } })
})

t.test(
  'an event whose transaction commits after a later event was relayed still reaches the subscriber, once',
  { skip: onPostgres ? false : 'PGlite runs one transaction at a time, so a later transaction cannot commit while an earlier one is open' },
  async (t) => {
    const { a, b, database } = await twoInstances(t)
    const watcher = await watchOrders(t, b)
    const grace: Caller = { subject: '2', userId: 2, scopes: new Set(['orders:write']), admin: false, expiresAt: Date.now() + 3_600_000 }

    // T1 writes an order and its event, then stays open on a connection of its own.
    const t1Database = await createDatabase({ url: database.url!, poolSize: 1 })
    t.teardown(() => t1Database.close())
    let inserted!: (outboxId: number) => void
    const t1Inserted = new Promise<number>((resolve) => (inserted = resolve))
    let commitT1!: () => void
    const t1MayCommit = new Promise<void>((resolve) => (commitT1 = resolve))
    const t1 = t1Database.db.transaction().execute(async (trx) => {
      const order = await a.services.orders.create(grace, { items: [{ sku: 'KB-101', qty: 1 }] }, trx)
      const event = await trx.selectFrom('outbox').select('id').where('topic', '=', 'order.created').orderBy('id', 'desc').executeTakeFirstOrThrow()
      inserted(event.id)
      await t1MayCommit
      return String(order.id)
    })
    const t1OutboxId = await t1Inserted

    // T2 starts later, so its event gets a larger id, and commits first; the relay runs.
    const t2 = await a.inject({ method: 'POST', url: '/api/v1/orders', headers: bearer(2, 'orders:write'), payload: { items: [{ sku: 'KB-101', qty: 2 }] } })
    t.equal(t2.statusCode, 201)
    const t2OrderId = String(t2.json().id)
    t.ok(await watcher.received(1), 'T2\'s event was delivered while T1 was still open')
    const t2Event = await database.db.selectFrom('outbox').select(['id', 'seq']).where('topic', '=', 'order.created').orderBy('id', 'desc').executeTakeFirstOrThrow()
    t.ok(t2Event.id > t1OutboxId, `T2's event has the larger id (${t2Event.id} > ${t1OutboxId}): the commits are out of id order`)
    t.not(t2Event.seq, null, 'and was relayed before T1 committed')

    commitT1()
    const t1OrderId = await t1
    t.ok(await watcher.received(2), 'T1\'s event arrived after it committed')
    await settle()
    t.same(watcher.ids, [t2OrderId, t1OrderId], 'both, once each, in the order they became visible')
    t.same(await relayedOrderIds(database), [t2OrderId, t1OrderId], 'which is the outbox\'s delivery order')
    t.ok(await eventually(() => b.eventDelivery.unavailable() === undefined), 'B stays able to deliver')
  },
)
