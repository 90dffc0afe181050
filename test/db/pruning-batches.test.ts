/**
 * What grows with traffic is pruned past its retention in batches of PRUNE_BATCH rows, each its own
 * statement, until a batch comes back short (decisions §17): the event log (its horizon moved to
 * the highest seq pruned), idempotency outcomes, and webhook deliveries with their attempts, of
 * which a delivery still to be attempted for an enabled endpoint is kept whatever its age.
 */
import t from 'tap'
import { sql } from 'kysely'
import { PRUNE_BATCH, pruneInBatches } from '../../src/db/prune-in-batches.ts'
import { deleteExpiredOutcomes } from '../../src/db/repositories/idempotency-keys.ts'
import { prunedThrough, pruneEventLog } from '../../src/db/repositories/outbox.ts'
import { pruneDeliveries } from '../../src/modules/webhooks/webhooks.repository.ts'
import { createTestDatabase } from '../helper.ts'

const DAY_MS = 86_400_000
const OLD = Math.floor(PRUNE_BATCH * 2.5)

/** pruneInBatches over `deleteBatch`, with the size of each batch it ran. */
async function pruned(deleteBatch: (limit: number) => Promise<number>): Promise<{ total: number; batches: number[] }> {
  const batches: number[] = []
  const total = await pruneInBatches(async (limit) => {
    const deleted = await deleteBatch(limit)
    batches.push(deleted)
    return deleted
  })
  return { total, batches }
}

t.test('the event log and idempotency outcomes are pruned a batch at a time, the recent kept', async (t) => {
  const { db } = await createTestDatabase(t)
  await sql`
    insert into outbox (topic, payload, created_at, published_at, seq)
    select 'order.created', '{}', now() - interval '9 days', now() - interval '9 days', nextval('outbox_seq') from generate_series(1, ${OLD})`.execute(
    db,
  )
  const newestOld = Number((await sql<{ seq: string }>`select max(seq) as seq from outbox`.execute(db)).rows[0]!.seq)
  await sql`insert into outbox (topic, payload, published_at, seq) values ('order.created', '{}', now(), nextval('outbox_seq'))`.execute(db)
  const events = await pruned((limit) => pruneEventLog(db, 7 * DAY_MS, limit))
  t.same(events.batches, [PRUNE_BATCH, PRUNE_BATCH, OLD - 2 * PRUNE_BATCH], 'batches of PRUNE_BATCH, until a short one')
  t.equal(events.total, OLD)
  t.equal(await prunedThrough(db), newestOld, 'the horizon is the highest seq pruned')
  t.equal(Number((await sql<{ n: string }>`select count(*) as n from outbox`.execute(db)).rows[0]!.n), 1, 'the recent event is kept')

  await sql`
    insert into idempotency_keys (caller, key, request_hash, status, body, expires_at)
    select '2', 'old-' || g, 'h', 201, '{}', now() - interval '1 minute' from generate_series(1, ${OLD}) as g`.execute(db)
  await sql`insert into idempotency_keys (caller, key, request_hash, status, body, expires_at) values ('2', 'live', 'h', 201, '{}', now() + interval '1 hour')`.execute(
    db,
  )
  const outcomes = await pruned((limit) => deleteExpiredOutcomes(db, limit))
  t.same(outcomes.batches, [PRUNE_BATCH, PRUNE_BATCH, OLD - 2 * PRUNE_BATCH])
  t.same(
    (await db.selectFrom('idempotency_keys').select('key').execute()).map((row) => row.key),
    ['live'],
  )
})

t.test('webhook deliveries and their attempts go after WEBHOOK_DELIVERY_RETENTION, unless still to be delivered', async (t) => {
  const { db } = await createTestDatabase(t)
  const endpoint = async (enabled: boolean) =>
    (
      await sql<{ id: number }>`
        insert into webhook_endpoints (owner_id, owner_admin, owner_scopes, url, secret, after_seq, enabled)
        values (2, false, '{}', 'https://example.com/hook', 'whsec_x', 0, ${enabled}) returning id`.execute(db)
    ).rows[0]!.id
  const [enabled, disabled] = [await endpoint(true), await endpoint(false)]
  const deliveries = (endpointId: number, status: string, age: string, count: number) =>
    sql`
    insert into webhook_deliveries (endpoint_id, event_seq, event_type, webhook_id, payload, status, created_at)
    select ${endpointId}, g, 'order.created', 'msg_' || md5(random()::text), '{}', ${status}, now() - ${age}::interval
    from generate_series((select coalesce(max(event_seq), 0) + 1 from webhook_deliveries where endpoint_id = ${endpointId}),
      (select coalesce(max(event_seq), 0) + ${count} from webhook_deliveries where endpoint_id = ${endpointId})) as g`.execute(db)
  await deliveries(enabled, 'succeeded', '40 days', OLD - 10)
  await deliveries(enabled, 'failed', '40 days', 5)
  await deliveries(disabled, 'pending', '40 days', 5)
  await deliveries(enabled, 'pending', '40 days', 3) // still to be delivered: kept
  await deliveries(enabled, 'succeeded', '2 days', 4) // within the retention: kept
  await sql`insert into webhook_delivery_attempts (delivery_id, attempted_at, duration_ms, response_status)
    select id, created_at, 12, 200 from webhook_deliveries`.execute(db)

  const result = await pruned((limit) => pruneDeliveries(db, 30 * DAY_MS, limit))
  t.same(result.batches, [PRUNE_BATCH, PRUNE_BATCH, OLD - 2 * PRUNE_BATCH], 'batches of PRUNE_BATCH, until a short one')
  const left = await sql<{ status: string; old: boolean; n: string }>`
    select status, created_at < now() - interval '30 days' as old, count(*) as n from webhook_deliveries group by 1, 2 order by 1, 2`.execute(
    db,
  )
  t.same(
    left.rows.map((row) => [row.status, row.old, Number(row.n)]),
    [
      ['pending', true, 3],
      ['succeeded', false, 4],
    ],
    'left: what is still to be delivered, and what is recent',
  )
  const attempts = await sql<{ n: string }>`select count(*) as n from webhook_delivery_attempts`.execute(db)
  t.equal(Number(attempts.rows[0]!.n), 7, 'the attempts of pruned deliveries went with them')
})
