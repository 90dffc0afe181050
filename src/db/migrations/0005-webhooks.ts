import { sql, type Kysely } from 'kysely'

/**
 * Webhooks (decisions §13, "One event log, every transport").
 *
 * - `webhook_endpoints`: a caller's target URL and signing secret. It keeps its owner's id, admin
 *   flag and scopes, so that the event log's visibility rule answers for it as for its owner.
 *   `after_seq` is how far the log has been fanned out into deliveries for it. `lease_owner` and
 *   `lease_until`: the instance delivering to it now (claimed with FOR UPDATE SKIP LOCKED); a
 *   lease outlives the longest attempt, so an instance that dies mid-attempt only delays delivery.
 * - `webhook_deliveries`: one event for one endpoint, with the public event as it was sent (the
 *   same bytes on every retry) and its attempts. Per endpoint, deliveries go out in seq order: only
 *   the oldest pending one is attempted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('owner_admin', 'boolean', (c) => c.notNull())
    .addColumn('owner_scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('types', sql`text[]`)
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text')
    .addColumn('after_seq', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('webhook_endpoints_owner_idx').on('webhook_endpoints').columns(['owner_id', 'id']).execute()
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_seq', 'bigint', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('first_attempt_at', 'timestamptz')
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('last_response_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('webhook_deliveries_endpoint_event_key', ['endpoint_id', 'event_seq'])
    .execute()
  // The head of an endpoint's queue: its oldest pending delivery.
  await sql`create index webhook_deliveries_pending_idx on webhook_deliveries (endpoint_id, event_seq) where status = 'pending'`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhook_endpoints').execute()
}
