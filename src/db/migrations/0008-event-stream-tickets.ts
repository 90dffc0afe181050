import type { Kysely } from 'kysely'

/**
 * Stream tickets (decisions §13, "Event streams for browsers"): a short-lived, single-use
 * credential a page exchanges its bearer token for, to open `GET /events/stream` with
 * `EventSource`, which cannot send `Authorization`. Kept in the database, so that a ticket obtained
 * from one instance opens a stream on any other, and used up by the one `DELETE … RETURNING` that
 * redeems it, so that two instances cannot both accept it. Only the ticket's SHA-256 is stored;
 * the row carries the caller as its token established it (subject, user, admin flag, scopes, the
 * token's expiry). Expired rows are deleted whenever a ticket is issued.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_stream_tickets')
    .addColumn('ticket_hash', 'text', (c) => c.primaryKey())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('admin', 'boolean', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('token_expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('event_stream_tickets_expires_idx').on('event_stream_tickets').column('expires_at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('event_stream_tickets').execute()
}
