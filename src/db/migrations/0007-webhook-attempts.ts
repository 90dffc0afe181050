import { sql, type Kysely } from 'kysely'

/**
 * Webhook deliveries as a receiver and its operator see them (decisions §13, "Webhook ids and
 * attempts"):
 *
 * - `webhook_deliveries.webhook_id`: the `webhook-id` header, random (`msg_` and 32 hex digits of a
 *   UUID v4) and stored with the delivery, so that it is the same on every attempt and redelivery
 *   of that delivery and unique across databases and deployments (a sequential id repeats after a
 *   database reset or on a second deployment). Deliveries made before this migration get one too.
 * - `webhook_delivery_attempts`: every attempt of a delivery, with when it started, how long it
 *   took, the answer's status (null when none came) or the error, and the first bytes of the
 *   receiver's answer. Deleted with its delivery.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('webhook_id', 'text').execute()
  await sql`update webhook_deliveries set webhook_id = 'msg_' || replace(gen_random_uuid()::text, '-', '')`.execute(db)
  await db.schema
    .alterTable('webhook_deliveries')
    .alterColumn('webhook_id', (c) => c.setNotNull())
    .execute()
  await db.schema.alterTable('webhook_deliveries').addUniqueConstraint('webhook_deliveries_webhook_id_key', ['webhook_id']).execute()
  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('delivery_id', 'integer', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempted_at', 'timestamptz', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_body', 'text')
    .execute()
  await db.schema
    .createIndex('webhook_delivery_attempts_delivery_idx')
    .on('webhook_delivery_attempts')
    .columns(['delivery_id', 'id'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_delivery_attempts').execute()
  await db.schema.alterTable('webhook_deliveries').dropColumn('webhook_id').execute()
}
