import { sql, type Kysely } from 'kysely'

/**
 * The outbox becomes the public event log (decisions §13, "One event log, every transport").
 *
 * - `owner_id`: the one user besides admins who may read the event (an order's owner), or null
 *   when any valid token may (articles, comments); src/events/event-visibility.ts reads it.
 *   Events recorded before this migration get it from the `userId` their payload always carried.
 * - An `article.created` event now carries the article as REST returns it; older ones carried only
 *   ids, so they get the article as it is now (an article deleted since has nothing to show, and its
 *   event is left out of the log's readers).
 * - `event_log_horizon`: the highest seq pruned so far. A reader resuming after an event older than
 *   it has missed events for good (410 EVENTS_EXPIRED). Seqs have gaps (a relay that rolls back
 *   still used its sequence values), so "older than the oldest kept event" could not say it.
 *   Before this migration events were pruned after a day without a record of it: the horizon
 *   starts just below the oldest event kept, or at the last seq given when none is.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('owner_id', 'integer').execute()
  await sql`update outbox set owner_id = (payload->>'userId')::integer where topic like 'order.%'`.execute(db)
  await sql`
    update outbox set payload = outbox.payload || jsonb_build_object('article', jsonb_build_object(
      'id', articles.id, 'title', articles.title, 'body', articles.body, 'author_id', articles.author_id,
      'created_at', to_char(articles.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'updated_at', to_char(articles.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
    from articles
    where outbox.topic = 'article.created' and not (outbox.payload ? 'article')
      and articles.id = (outbox.payload->>'articleId')::integer`.execute(db)
  // Pruning deletes the oldest relayed events, a seq prefix found through when they were relayed.
  await db.schema.createIndex('outbox_published_idx').on('outbox').column('published_at').execute()
  await db.schema
    .createTable('event_log_horizon')
    .addColumn('singleton', 'boolean', (c) => c.primaryKey().defaultTo(true).check(sql`singleton`))
    .addColumn('pruned_through', 'bigint', (c) => c.notNull())
    .execute()
  await sql`
    insert into event_log_horizon (pruned_through)
    select coalesce(
      (select min(seq) - 1 from outbox),
      (select case when is_called then last_value else last_value - 1 end from outbox_seq))`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('event_log_horizon').execute()
  await db.schema.dropIndex('outbox_published_idx').execute()
  await db.schema.alterTable('outbox').dropColumn('owner_id').execute()
}
