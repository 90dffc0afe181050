import { sql, type Kysely } from 'kysely'

/**
 * An index for every sort and filter a list offers (decisions §17), so that a page reads its own
 * rows and no more, whatever the size of the table: a keyset page is one range scan of an index
 * whose columns are the filter's, then the sort's, then the id (scanned backwards for a descending
 * sort).
 *
 * Orders (`GET /orders`, `GET /users/{id}/orders`, GraphQL's orders and ordersConnection) sort on
 * created_at, total or id, filtered by nothing, status, user, or both; migration 0001 covered
 * created_at for all four and total for a user. The rest are here.
 *
 * The event log is read by who may see it (src/events/event-visibility.ts): a customer's own events
 * and the events of no owner, an admin's all of them, each optionally of some types. A reader takes
 * each (owner, type) it may see as a range of its own, merged by seq (events.repository.ts), so it
 * reads only the events it returns: (owner_id, seq) and (owner_id, topic, seq) serve a customer, and
 * (topic, seq) an admin's `types`; `seq` alone (migration 0002) an admin without. Only relayed events
 * have a seq, and only they are read: the indexes leave the others out.
 *
 * Building them holds writes to orders and the event log while it runs (28 s on 2,000,000 orders).
 * An index that exists is left as it is, so an operator can build them beforehand without holding
 * writes (CREATE INDEX CONCURRENTLY, the statements in docs/operations.md, "Exact totals and the
 * list indexes") and the migration then has only the counts to do.
 */
const ORDER_INDEXES: Array<[string, string[]]> = [
  ['orders_total_idx', ['total', 'id']],
  ['orders_id_of_status_idx', ['status', 'id']],
  ['orders_status_total_idx', ['status', 'total', 'id']],
  ['orders_id_of_user_idx', ['user_id', 'id']],
  ['orders_user_status_total_idx', ['user_id', 'status', 'total', 'id']],
  ['orders_id_of_user_status_idx', ['user_id', 'status', 'id']],
]

const EVENT_INDEXES: Array<[string, string[]]> = [
  ['outbox_owner_seq_idx', ['owner_id', 'seq']],
  ['outbox_owner_topic_seq_idx', ['owner_id', 'topic', 'seq']],
  ['outbox_topic_seq_idx', ['topic', 'seq']],
]

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of ORDER_INDEXES) await db.schema.createIndex(name).ifNotExists().on('orders').columns(columns).execute()
  for (const [name, columns] of EVENT_INDEXES) {
    await db.schema.createIndex(name).ifNotExists().on('outbox').columns(columns).where(sql.ref('seq'), 'is not', null).execute()
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of [...ORDER_INDEXES, ...EVENT_INDEXES]) await db.schema.dropIndex(name).execute()
}
