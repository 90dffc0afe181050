/**
 * The worker's claim (webhooks.repository.ts claimEndpoints): an endpoint this instance is still
 * working on is not claimed again, not even once its lease has run out (a serve that outlived its
 * lease would otherwise be run twice at once, sending the same delivery concurrently); one it is
 * not working on, with a lease of its own left behind, is claimed at once.
 */
import t from 'tap'
import { sql } from 'kysely'
import { recordEvent } from '../../../src/db/repositories/outbox.ts'
import { claimEndpoints } from '../../../src/modules/webhooks/webhooks.repository.ts'
import { createTestDatabase } from '../../helper.ts'

t.test('an endpoint being served is never claimed again by its own instance, lease or no lease', async (t) => {
  const { db } = await createTestDatabase(t)
  await recordEvent(db, 'article.created', { articleId: 1, authorId: 1 }, null)
  await sql`update outbox set seq = nextval('outbox_seq'), published_at = now() where seq is null`.execute(db)
  const { id } = await db
    .insertInto('webhook_endpoints')
    .values({
      owner_id: 1,
      owner_admin: true,
      owner_scopes: ['admin'],
      url: 'https://receiver.example/hook',
      secret: 'whsec_test',
      types: null,
      disabled_reason: null,
      after_seq: 0,
      lease_owner: 'instance-a',
      lease_until: sql<Date>`now() - interval '1 second'`,
    })
    .returning('id')
    .executeTakeFirstOrThrow()

  t.same(await claimEndpoints(db, 'instance-a', 40_000, 10, [id]), [], 'expired, but still being served: not claimed')
  const claimed = await claimEndpoints(db, 'instance-a', 40_000, 10, [])
  t.same(
    claimed.map((endpoint) => endpoint.id),
    [id],
    'not being served: claimed again at once',
  )
  t.same(await claimEndpoints(db, 'instance-b', 40_000, 10, []), [], 'its lease runs: no other instance takes it')
})
