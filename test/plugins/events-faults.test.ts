/**
 * Faults lose no event (decisions §12): the listening connection is terminated and cannot come
 * back for a while, the whole database drops every connection, and reading the outbox fails. Each
 * time the subscriber ends up with every event once, in delivery order, and /readyz tells a load
 * balancer when an instance cannot deliver. Real faults on the real server, confined to the test's
 * own database (and, for the failing read, a role of its own), so they need PostgreSQL. Redis going
 * away (a redis-server the test starts) is a fault on either database.
 */
import t from 'tap'
import type { Caller } from '../../src/auth/caller.ts'
import { createDatabase } from '../../src/db/database.ts'
import { build, bearer } from '../helper.ts'
import { eventually } from '../graphql/subscription-clients.ts'
import {
  allowConnections,
  asAdmin,
  createOrders,
  databaseName,
  duplicates,
  listenerPids,
  onPostgres,
  ownRedis,
  relayedOrderIds,
  settle,
  terminateBackends,
  twoInstances,
  until,
  watchOrders,
} from './event-delivery-fixtures.ts'

t.test('Redis stops: instances configured with it keep delivering every event, through NOTIFY and polling', async (t) => {
  const redis = await ownRedis(t)
  const { a, b, database } = await twoInstances(t, { a: { REDIS_URL: redis.url }, b: { REDIS_URL: redis.url } })
  const watcher = await watchOrders(t, b)
  // Through the service, not HTTP: how requests fare without Redis (rate limits) is not this test's subject.
  const caller: Caller = { subject: '2', userId: 2, scopes: new Set(['orders:write']), admin: false, expiresAt: Date.now() + 3_600_000 }
  const create = async (count: number) => {
    const ids: string[] = []
    for (let i = 0; i < count; i++)
      ids.push(String((await a.services.orders.create(caller, { items: [{ sku: 'KB-101', qty: 1 }] })).value.id))
    return ids
  }
  const before = await create(3)
  t.ok(await watcher.received(3), 'delivered while Redis is up')

  await redis.stop()
  const during = await create(5)
  t.ok(await watcher.received(8, 15_000), 'delivered while Redis is down')
  t.equal(b.eventDelivery.unavailable(), undefined, 'and B does not report itself unable to deliver')
  // Restarted before the instances close, so that their Redis clients can quit cleanly.
  await redis.start()
  const after = await create(3)
  t.ok(await watcher.received(11))
  await settle()
  t.same(duplicates(watcher.ids), [], 'none twice')
  t.same(watcher.ids, [...before, ...during, ...after], 'all of them, in order')
  t.same(watcher.ids, await relayedOrderIds(database), 'which is the delivery order')
})

const skip = onPostgres ? false : 'the fault needs a PostgreSQL server (DATABASE_URL): PGlite has no connections to lose'
const grace = bearer(2, 'orders:write')

t.test('the listener is terminated and cannot reconnect for a while: events keep arriving, once each, in order', { skip }, async (t) => {
  const { a, b, database } = await twoInstances(t)
  const watcher = await watchOrders(t, b)
  // Five at once, so that A's pool holds connections for the time new ones are refused.
  const before = await createOrders(a, grace, 5, 5)
  t.ok(await watcher.received(5), 'delivered while everything is up')
  const listeners = await listenerPids(database)
  t.equal(listeners.length, 2, 'each instance has a listener connection')

  t.teardown(() => allowConnections(database, true))
  await allowConnections(database, false)
  t.equal(await terminateBackends(database, 'listeners'), 2, 'both listeners terminated')
  const during = await createOrders(a, grace, 5)
  t.same(during.statuses, [201, 201, 201, 201, 201], 'writes go on through the pool')
  t.same(await listenerPids(database), [], 'no listener is back: new connections are refused')
  t.ok(await watcher.received(10, 15_000), 'events committed while no listener exists are delivered by polling')
  const ready = await b.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 200, 'an instance that delivers by polling is ready')

  await allowConnections(database, true)
  t.ok(
    await until(async () => {
      const pids = await listenerPids(database)
      return pids.length === 2 && pids.every((pid) => !listeners.includes(pid))
    }),
    'both listeners reconnected on their own',
  )
  const after = await createOrders(a, grace, 5)
  t.ok(await watcher.received(15), 'events after the reconnection arrive')
  await settle()
  t.same(duplicates(watcher.ids), [], 'none twice')
  t.same([...watcher.ids].sort(), [...before.ids, ...during.ids, ...after.ids].sort(), 'all 15')
  t.same(watcher.ids, await relayedOrderIds(database), 'in delivery order')
  t.equal((await b.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, '/readyz is 200')
})

t.test(
  'every connection of the database is dropped and refused for a while: /readyz is 503, then every event arrives once',
  { skip },
  async (t) => {
    const { a, b, database } = await twoInstances(t)
    const watcher = await watchOrders(t, b)
    const before = await createOrders(a, grace, 3)
    t.ok(await watcher.received(3))

    t.teardown(() => allowConnections(database, true))
    await allowConnections(database, false)
    t.ok((await terminateBackends(database, 'all')) >= 2, 'every backend of the test database terminated')
    let down: string | undefined
    t.ok(
      await until(async () => {
        const response = await b.inject({ method: 'GET', url: '/readyz' })
        if (response.statusCode === 503) down = response.json().code
        return down !== undefined
      }),
      '/readyz is 503',
    )
    t.equal(down, 'SERVICE_UNAVAILABLE', 'naming the database first')
    t.ok(await until(async () => b.eventDelivery.unavailable() !== undefined), 'event delivery reports itself unavailable too')

    await allowConnections(database, true)
    // Requests right after the database is back may still find a dead pooled connection.
    t.ok(await eventually(() => b.eventDelivery.unavailable() === undefined, 15_000), 'delivery recovers by itself')
    const after = await createOrders(a, grace, 3)
    t.same(after.statuses, [201, 201, 201])
    t.ok(await watcher.received(6), 'events after the outage arrive')
    await settle()
    t.same(duplicates(watcher.ids), [], 'none twice')
    t.same(watcher.ids, [...before.ids, ...after.ids], 'all of them, in order')
    t.same(watcher.ids, await relayedOrderIds(database), 'which is the delivery order')
    t.ok(await until(async () => (await b.inject({ method: 'GET', url: '/readyz' })).statusCode === 200), '/readyz is 200 again')
  },
)

t.test(
  'reading the outbox fails: nothing is skipped, /readyz is 503 EVENTS_UNAVAILABLE, and the events arrive once reads work again',
  { skip },
  async (t) => {
    const { a, database } = await twoInstances(t)
    // B connects as a role of its own whose read access to the outbox the test takes away.
    const role = `${databaseName(database)}_reader`
    await asAdmin(`create role "${role}" login`)
    const readerUrl = new URL(database.url!)
    readerUrl.username = role
    const onClone = (statement: string) => asAdmin(statement, [], database)
    await onClone(`grant select on all tables in schema public to "${role}"`)
    const bDatabase = await createDatabase({ url: readerUrl.toString(), poolSize: 5 })
    const b = await build({ teardown: () => {} }, { database: bDatabase, env: { EVENTS_RELAY: 'false' } })
    t.teardown(async () => {
      await b.close()
      await bDatabase.close()
      await onClone(`drop owned by "${role}"`).catch(() => {})
      await asAdmin(`drop role if exists "${role}"`)
    })
    const watcher = await watchOrders(t, b)
    const before = await createOrders(a, grace, 3)
    t.ok(await watcher.received(3), 'delivered while B may read the outbox')

    await onClone(`revoke select on outbox from "${role}"`)
    const during = await createOrders(a, grace, 5)
    t.same(during.statuses, [201, 201, 201, 201, 201])
    t.ok(
      await until(async () => {
        const relayed = await relayedOrderIds(database)
        return during.ids.every((id) => relayed.includes(id))
      }),
      'A relayed them (and notified B, whose reads fail)',
    )
    let unready: { statusCode: number; code?: string; retryAfter?: string | string[] | number } | undefined
    await until(async () => {
      const response = await b.inject({ method: 'GET', url: '/readyz' })
      if (response.statusCode === 503)
        unready = { statusCode: 503, code: response.json().code, retryAfter: response.headers['retry-after'] }
      return unready !== undefined
    })
    t.same(
      unready,
      { statusCode: 503, code: 'EVENTS_UNAVAILABLE', retryAfter: '5' },
      '/readyz is 503 EVENTS_UNAVAILABLE with Retry-After while B cannot read events',
    )
    t.same(watcher.ids, before.ids, 'nothing was delivered, nothing skipped')

    await onClone(`grant select on outbox to "${role}"`)
    t.ok(await watcher.received(8, 15_000), 'the failed reads were retried and delivered the events')
    await settle()
    t.same(duplicates(watcher.ids), [], 'none twice')
    t.same(watcher.ids, await relayedOrderIds(database), 'all 8, in delivery order')
    t.same([...watcher.ids].sort(), [...before.ids, ...during.ids].sort())
    t.equal((await b.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, '/readyz is 200 again')
  },
)
