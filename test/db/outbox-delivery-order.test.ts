/**
 * The outbox's delivery order: the relay numbers events in the order it relays them, the numbers
 * never go back (not even after pruning empties the table), and a database migrated from before
 * `seq` existed keeps its published events in the order they were published.
 */
import t from 'tap'
import { sql } from 'kysely'
import { Migrator } from 'kysely/migration'
import { createDatabase, migrateToLatest } from '../../src/db/database.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import {
  lastRelayedSeq,
  pruneEventLog,
  recordEvent,
  RELAY_LOCK,
  relayedEventsAfter,
  relayOutboxBatch,
} from '../../src/db/repositories/outbox.ts'
import { createEmptyDatabase as emptyDatabase, createTestDatabase } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'

t.test('events relayed before the migration get seqs in publication order; the unrelayed wait for the relay', async (t) => {
  const { db } = await emptyDatabase(t)
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const first = await migrator.migrateTo('0001-initial-schema')
  t.equal(first.error, undefined)
  await sql`
    insert into outbox (topic, payload, published_at) values
      ('order.created', '{"n": 1}', now() - interval '1 minute'),
      ('order.created', '{"n": 2}', now() - interval '2 minutes'),
      ('order.created', '{"n": 3}', null)`.execute(db)
  await migrateToLatest(db)
  const relayed = await relayedEventsAfter(db, 0, 10)
  t.same(
    relayed.map((event) => [event.seq, event.payload]),
    [
      [1, { n: 2 }],
      [2, { n: 1 }],
    ],
    'ordered by when they were published',
  )
  t.equal(await lastRelayedSeq(db), 2)

  const batch = await db.transaction().execute((trx) => relayOutboxBatch(trx))
  t.same(batch, { count: 1, lastSeq: 3 }, 'the waiting event is relayed next')
  t.same(
    (await relayedEventsAfter(db, 2, 10)).map((event) => event.payload),
    [{ n: 3 }],
  )
})

t.test('the relay numbers a batch in id order, and seqs never go back, even after pruning empties the outbox', async (t) => {
  const { db } = await createTestDatabase(t)
  await db.transaction().execute(async (trx) => {
    for (let n = 1; n <= 3; n++) await recordEvent(trx, 'article.created', { articleId: n, authorId: 1 }, null)
  })
  const batch = await db.transaction().execute((trx) => relayOutboxBatch(trx))
  t.equal(batch.count, 3)
  const events = await relayedEventsAfter(db, 0, 10)
  t.same(
    events.map((event) => event.payload.articleId),
    [1, 2, 3],
  )
  t.same(
    events.map((event) => event.seq),
    [batch.lastSeq! - 2, batch.lastSeq! - 1, batch.lastSeq!],
    'consecutive, in id order',
  )
  const unrelayed = await db
    .selectFrom('outbox')
    .select('id')
    .where((eb) => eb.or([eb('seq', 'is', null), eb('published_at', 'is', null)]))
    .execute()
  t.same(unrelayed, [], 'every relayed event has both its seq and published_at')

  await sql`update outbox set published_at = now() - interval '2 days'`.execute(db)
  t.equal(await pruneEventLog(db, 86_400_000), 3)
  t.equal(await lastRelayedSeq(db), 0, 'the outbox is empty')
  await db.transaction().execute((trx) => recordEvent(trx, 'article.created', { articleId: 4, authorId: 1 }, null))
  const next = await db.transaction().execute((trx) => relayOutboxBatch(trx))
  t.ok(next.lastSeq! > batch.lastSeq!, `the next seq (${next.lastSeq}) is above the pruned ones (${batch.lastSeq})`)
})

t.test(
  'a relay that finds another holding the lock relays nothing',
  { skip: postgresUrl() ? false : 'PGlite runs one transaction at a time' },
  async (t) => {
    const { db, url } = await createTestDatabase(t)
    await db.transaction().execute((trx) => recordEvent(trx, 'article.created', { articleId: 1, authorId: 1 }, null))
    const other = await createDatabase({ url: url!, poolSize: 1 })
    t.teardown(() => other.close())
    await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${RELAY_LOCK})`.execute(trx)
      t.same(await other.db.transaction().execute((otherTrx) => relayOutboxBatch(otherTrx)), { count: 0, lastSeq: undefined })
    })
    t.equal((await db.transaction().execute((trx) => relayOutboxBatch(trx))).count, 1, 'once the lock is free it relays')
  },
)
