import { sql, type Kysely } from 'kysely'

/**
 * The outbox's delivery order (decisions §11, §12). Ids are taken when a transaction inserts, so
 * transactions commit out of id order; `seq` is given by the relay under its advisory lock, in the
 * relaying transaction, which commits before the lock is released: once seq N is visible, every
 * smaller seq that will ever exist is visible too, and a listener that has delivered up to N only
 * ever needs what is above N. A sequence rather than max(seq) + 1, because pruning may empty the
 * table and seq must never go back. Unrelayed events have no seq (and no published_at).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create sequence outbox_seq as bigint`.execute(db)
  await db.schema.alterTable('outbox').addColumn('seq', 'bigint').execute()
  // Events relayed before this migration get a seq in the order they were published.
  await sql`
    update outbox set seq = ordered.seq
    from (select id, row_number() over (order by published_at, id) as seq from outbox where published_at is not null) as ordered
    where outbox.id = ordered.id`.execute(db)
  await sql`select setval('outbox_seq', coalesce((select max(seq) from outbox), 0) + 1, false)`.execute(db)
  // Listeners read "after seq N, in seq order"; unique, so an order is never ambiguous.
  await db.schema.createIndex('outbox_seq_idx').unique().on('outbox').column('seq').execute()
  // The relay looks for what has no seq yet.
  await db.schema.dropIndex('outbox_unpublished_idx').execute()
  await db.schema.createIndex('outbox_unrelayed_idx').on('outbox').column('id').where(sql.ref('seq'), 'is', null).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('outbox_unrelayed_idx').execute()
  await db.schema.createIndex('outbox_unpublished_idx').on('outbox').column('id').where(sql.ref('published_at'), 'is', null).execute()
  await db.schema.dropIndex('outbox_seq_idx').execute()
  await db.schema.alterTable('outbox').dropColumn('seq').execute()
  await sql`drop sequence outbox_seq`.execute(db)
}
