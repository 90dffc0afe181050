/**
 * Every committed event reaches a subscriber once, in delivery (seq) order, however the
 * transactions that wrote them interleave (decisions §12): concurrent writers whose commits land
 * out of id order, a transaction that commits after a later one was already relayed, and
 * instances with and without Redis on one database.
 */
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/database.ts'
import type { Caller } from '../../src/auth/caller.ts'
import { bearer, createOrder, reachableRedis } from '../helper.ts'
import { eventually } from '../graphql/subscription-clients.ts'
import {
  createOrders,
  customer,
  duplicates,
  onPostgres,
  relayedOrderIds,
  settle,
  twoInstances,
  watchOrders,
} from './event-delivery-fixtures.ts'

/** The advisory lock a test holds to keep a transaction waiting at its commit. */
const HOLD_LOCK = 74_201

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * On PostgreSQL 400 orders, so that many commits land out of id order. PGlite runs one transaction
 * at a time: commits land in id order however many there are, and what is left to prove (every
 * event once, in order, across two instances and their wake-ups) needs no more than 100; 400 cost
 * about 40 s of CPU there (decisions §14, "How CI stays fast").
 */
const ORDERS = onPostgres ? 400 : 100
const CONCURRENCY = 16

/** ORDERS orders through A at concurrency 16, an admin watching on B. */
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
  t.same(watcher.ids, await relayedOrderIds(database), "in the outbox's delivery order")
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

    // T1 writes an order and its event through the service, which owns its transaction; a deferred
    // trigger (on this test's own database) holds T1 at its commit until the test lets it go: it
    // waits for an advisory lock the test holds. Only T1's order (one keyboard) is held.
    const holder = await createDatabase({ url: database.url!, poolSize: 1 })
    t.teardown(() => holder.close())
    await sql`create function hold_t1_commit() returns trigger language plpgsql as $$
      begin
        if (new.payload -> 'order' -> 'items' -> 0 ->> 'qty') = '1' then perform pg_advisory_xact_lock(${sql.lit(HOLD_LOCK)}); end if;
        return null;
      end $$`.execute(holder.db)
    await sql`create constraint trigger hold_t1_commit after insert on outbox deferrable initially deferred
      for each row execute function hold_t1_commit()`.execute(holder.db)
    let commitT1!: () => void
    const t1MayCommit = new Promise<void>((resolve) => (commitT1 = resolve))
    let lockTaken!: () => void
    const locked = new Promise<void>((resolve) => (lockTaken = resolve))
    const holding = holder.db.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(${HOLD_LOCK})`.execute(connection)
      lockTaken()
      await t1MayCommit
      await sql`select pg_advisory_unlock(${HOLD_LOCK})`.execute(connection)
    })
    await locked
    const t1 = a.services.orders.create(grace, { items: [{ sku: 'KB-101', qty: 1 }] }).then((written) => String(written.value.id))
    // T1 has inserted its event and waits at its commit; the outbox id it drew is the sequence's last value.
    await waitUntil(
      async () =>
        (
          await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_locks where locktype = 'advisory' and not granted`.execute(database.db)
        ).rows[0]!.waiting === 1,
    )
    const t1OutboxId = Number(
      (await sql<{ last_value: string }>`select last_value from outbox_id_seq`.execute(database.db)).rows[0]!.last_value,
    )

    // T2 starts later, so its event gets a larger id, and commits first; the relay runs.
    const t2 = await createOrder(a, [{ sku: 'KB-101', qty: 2 }], bearer(2, 'orders:write'))
    t.equal(t2.statusCode, 201)
    const t2OrderId = String(t2.json().id)
    t.ok(await watcher.received(1), "T2's event was delivered while T1 was still open")
    const t2Event = await database.db
      .selectFrom('outbox')
      .select(['id', 'seq'])
      .where('topic', '=', 'order.created')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    t.ok(t2Event.id > t1OutboxId, `T2's event has the larger id (${t2Event.id} > ${t1OutboxId}): the commits are out of id order`)
    t.not(t2Event.seq, null, 'and was relayed before T1 committed')

    commitT1()
    await holding
    const t1OrderId = await t1
    t.ok(await watcher.received(2), "T1's event arrived after it committed")
    await settle()
    t.same(watcher.ids, [t2OrderId, t1OrderId], 'both, once each, in the order they became visible')
    t.same(await relayedOrderIds(database), [t2OrderId, t1OrderId], "which is the outbox's delivery order")
    t.ok(await eventually(() => b.eventDelivery.unavailable() === undefined), 'B stays able to deliver')
  },
)
