import { sql, type Kysely } from 'kysely'

// Timestamps are timestamptz(3): the API speaks milliseconds, and keyset cursors compare the
// stored value with the one a cursor carries, so the two must have the same precision.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('companies')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('name', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('users')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('company_id', 'integer', (c) => c.references('companies.id').onDelete('set null'))
    .addColumn('created_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('users_company_id_idx').on('users').column('company_id').execute()

  await db.schema
    .createTable('products')
    .addColumn('sku', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('price', 'integer', (c) => c.notNull().check(sql`price >= 0`))
    .addColumn('created_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await db.schema
    .createTable('orders')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'paid', 'cancelled', 'refunded')`))
    .addColumn('total', 'bigint', (c) => c.notNull().check(sql`total >= 0`))
    .addColumn('created_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  // Keyset pagination of "my orders", optionally filtered by status, newest first (the default
  // sort); the same indexes serve the ascending direction by scanning backwards.
  await db.schema.createIndex('orders_user_created_idx').on('orders').columns(['user_id', 'created_at', 'id']).execute()
  await db.schema.createIndex('orders_user_status_created_idx').on('orders').columns(['user_id', 'status', 'created_at', 'id']).execute()
  await db.schema.createIndex('orders_user_total_idx').on('orders').columns(['user_id', 'total', 'id']).execute()
  // Admins list everyone's orders.
  await db.schema.createIndex('orders_created_idx').on('orders').columns(['created_at', 'id']).execute()
  await db.schema.createIndex('orders_status_created_idx').on('orders').columns(['status', 'created_at', 'id']).execute()

  await db.schema
    .createTable('order_items')
    .addColumn('order_id', 'integer', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('sku', 'text', (c) => c.notNull().references('products.sku'))
    .addColumn('qty', 'integer', (c) => c.notNull().check(sql`qty between 1 and 1000`))
    .addColumn('unit_price', 'integer', (c) => c.notNull().check(sql`unit_price >= 0`))
    .addPrimaryKeyConstraint('order_items_pkey', ['order_id', 'position'])
    .execute()

  await db.schema
    .createTable('articles')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('articles_created_idx').on('articles').columns(['created_at', 'id']).execute()
  await db.schema.createIndex('articles_title_idx').on('articles').columns(['title', 'id']).execute()
  await db.schema.createIndex('articles_author_idx').on('articles').column('author_id').execute()

  await db.schema
    .createTable('comments')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('article_id', 'integer', (c) => c.notNull().references('articles.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex('comments_article_created_idx').on('comments').columns(['article_id', 'created_at', 'id']).execute()

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('caller', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('location', 'text')
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', sql`timestamptz(3)`, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['caller', 'key'])
    .execute()
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute()

  await db.schema
    .createTable('outbox')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', sql`timestamptz(3)`, (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('published_at', sql`timestamptz(3)`)
    .execute()
  // The publisher only ever looks for what it has not published yet.
  await db.schema.createIndex('outbox_unpublished_idx').on('outbox').column('id').where(sql.ref('published_at'), 'is', null).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['outbox', 'idempotency_keys', 'comments', 'articles', 'order_items', 'orders', 'products', 'users', 'companies']) {
    await db.schema.dropTable(table).ifExists().execute()
  }
}
