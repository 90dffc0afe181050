import t from 'tap'
import { sql } from 'kysely'
import { deleteExpiredOutcomes } from '../../src/db/repositories/idempotency-keys.ts'
import { prunedThrough, pruneEventLog } from '../../src/db/repositories/outbox.ts'
import { createTestDatabase } from '../helper.ts'

const DAY_MS = 86_400_000

t.test('pruning removes events relayed longer ago than the retention and expired idempotency keys, nothing else', async (t) => {
  const { db } = await createTestDatabase(t)
  const before = await prunedThrough(db)
  await sql`
    insert into outbox (topic, payload, created_at, published_at, seq) values
      ('order.created', '{}', now() - interval '9 days', now() - interval '8 days', nextval('outbox_seq')),
      ('order.created', '{}', now() - interval '3 days', now() - interval '2 days', nextval('outbox_seq')),
      ('order.created', '{}', now() - interval '1 hour', now() - interval '1 hour', nextval('outbox_seq')),
      ('order.created', '{}', now() - interval '9 days', null, null)`.execute(db)
  await sql`
    insert into idempotency_keys (caller, key, request_hash, status, location, body, expires_at) values
      ('2', 'old', 'h', 201, null, '{}', now() - interval '1 minute'),
      ('2', 'live', 'h', 201, null, '{}', now() + interval '1 hour')`.execute(db)
  const seqs = (await db.selectFrom('outbox').select('seq').where('seq', 'is not', null).orderBy('seq').execute()).map((row) =>
    Number(row.seq),
  )
  t.equal(await pruneEventLog(db, 7 * DAY_MS), 1, 'EVENTS_RETENTION 7 days: the 8-day-old event goes')
  t.equal(await prunedThrough(db), seqs[0], 'the horizon moves to the highest seq pruned')
  t.equal(await pruneEventLog(db, DAY_MS), 1, 'a day: the 2-day-old event goes too')
  t.equal(await prunedThrough(db), seqs[1])
  t.equal(await pruneEventLog(db, DAY_MS), 0, 'nothing more to prune')
  t.equal(await prunedThrough(db), seqs[1], 'the horizon stays where it was')
  t.ok(seqs[0]! > before)
  t.equal(await deleteExpiredOutcomes(db), 1)
  const events = await db.selectFrom('outbox').select(['published_at']).execute()
  t.equal(events.length, 2, 'recent and unrelayed events stay')
  t.ok(
    events.some((event) => event.published_at === null),
    'an unrelayed event is never pruned',
  )
  const keys = await db.selectFrom('idempotency_keys').select('key').execute()
  t.same(
    keys.map((row) => row.key),
    ['live'],
  )
})
