/**
 * Migration 0004 keeps the events recorded before it readable through the event log: order events
 * get their owner from the payload, an article.created event gets its article as REST returns it
 * (one whose article is gone is left out), and the horizon starts below the oldest event kept.
 */
import t from 'tap'
import { sql } from 'kysely'
import { Migrator } from 'kysely/migration'
import { migrateToLatest } from '../../src/db/database.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { prunedThrough } from '../../src/db/repositories/outbox.ts'
import { audienceOf } from '../../src/events/event-visibility.ts'
import { createEventsService } from '../../src/events/events.service.ts'
import { createCursorCodec } from '../../src/pagination/cursor.ts'
import { createEmptyDatabase } from '../helper.ts'

t.test('events recorded before migration 0004 are read with their owner and record', async (t) => {
  const { db } = await createEmptyDatabase(t)
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  t.equal((await migrator.migrateTo('0003-idempotency-claim')).error, undefined)
  await sql`insert into users (id, name) values (2, 'Grace'), (3, 'Alan')`.execute(db)
  await sql`insert into articles (id, author_id, title, body, created_at, updated_at)
    values (7, 2, 'Kept', 'Body', '2026-01-05T09:00:00.123Z', '2026-01-05T10:00:00.456Z')`.execute(db)
  const order = {
    id: 5,
    status: 'pending',
    total: 100,
    items: [],
    user_id: 3,
    created_at: '2026-01-05T09:00:00.000Z',
    updated_at: '2026-01-05T09:00:00.000Z',
  }
  // As the relay left them: seqs from 40 on (earlier ones were pruned after a day, unrecorded).
  await sql`select setval('outbox_seq', 39)`.execute(db)
  await sql`
    insert into outbox (topic, payload, published_at, seq) values
      ('order.created', ${JSON.stringify({ orderId: 5, userId: 3, order })}, now(), nextval('outbox_seq')),
      ('article.created', '{"articleId": 7, "authorId": 2}', now(), nextval('outbox_seq')),
      ('article.created', '{"articleId": 8, "authorId": 2}', now(), nextval('outbox_seq'))`.execute(db)
  await migrateToLatest(db)

  t.equal(await prunedThrough(db), 39, 'the horizon is just below the oldest event kept')
  const events = createEventsService({ db, cursors: createCursorCodec('a-secret-of-at-least-32-characters!!') })
  const alan = { userId: 3, admin: false, scopes: new Set(['orders:read']) }
  const read = await events.readAfter(audienceOf(alan), 39, { limit: 10 })
  t.same(
    read.events.map((event) => [event.id, event.type, event.data]),
    [
      ['40', 'order.created', order],
      [
        '41',
        'article.created',
        {
          id: 7,
          title: 'Kept',
          body: 'Body',
          author_id: 2,
          created_at: '2026-01-05T09:00:00.123Z',
          updated_at: '2026-01-05T10:00:00.456Z',
        },
      ],
    ],
    "the order's owner sees it; the article as REST shows it; the deleted article's event is left out",
  )
  const grace = { userId: 2, admin: false, scopes: new Set(['orders:read']) }
  t.same(
    (await events.readAfter(audienceOf(grace), 39, { limit: 10 })).events.map((event) => event.id),
    ['41'],
    "another user does not see Alan's order",
  )
})

t.test('on a log with nothing kept, the horizon is the last seq given', async (t) => {
  const { db } = await createEmptyDatabase(t)
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  t.equal((await migrator.migrateTo('0003-idempotency-claim')).error, undefined)
  // Twelve events were relayed, then pruned after a day.
  await sql`select setval('outbox_seq', 12)`.execute(db)
  await migrateToLatest(db)
  t.equal(await prunedThrough(db), 12, 'resuming after any of them is EVENTS_EXPIRED')
})

t.test('a new database has pruned nothing', async (t) => {
  const { db } = await createEmptyDatabase(t)
  await migrateToLatest(db)
  t.equal(await prunedThrough(db), 0)
})
