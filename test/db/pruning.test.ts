import t from 'tap'
import { sql } from 'kysely'
import { deleteExpiredOutcomes } from '../../src/db/repositories/idempotency-keys.ts'
import { deletePublishedEvents } from '../../src/db/repositories/outbox.ts'
import { createTestDatabase } from '../helper.ts'

t.test('pruning removes events published over a day ago and expired idempotency keys, nothing else', async (t) => {
  const { db } = await createTestDatabase(t)
  await sql`
    insert into outbox (topic, payload, created_at, published_at) values
      ('order.created', '{}', now() - interval '3 days', now() - interval '2 days'),
      ('order.created', '{}', now() - interval '1 hour', now() - interval '1 hour'),
      ('order.created', '{}', now() - interval '3 days', null)`.execute(db)
  await sql`
    insert into idempotency_keys (caller, key, request_hash, status, location, body, expires_at) values
      ('2', 'old', 'h', 201, null, '{}', now() - interval '1 minute'),
      ('2', 'live', 'h', 201, null, '{}', now() + interval '1 hour')`.execute(db)
  t.equal(await deletePublishedEvents(db), 1)
  t.equal(await deleteExpiredOutcomes(db), 1)
  const events = await db.selectFrom('outbox').select(['published_at']).execute()
  t.equal(events.length, 2, 'recent and unpublished events stay')
  t.ok(
    events.some((event) => event.published_at === null),
    'an unpublished event is never pruned',
  )
  const keys = await db.selectFrom('idempotency_keys').select('key').execute()
  t.same(
    keys.map((row) => row.key),
    ['live'],
  )
})
