import { sql, type Kysely } from 'kysely'
import type { OrderStatus } from '../contract/contract-types.ts'
import type { Database } from './schema.ts'

/**
 * The demo data set a first start loads (decisions §1). The README's example requests use it:
 * user 1 is the admin of the examples, users 2 and 3 own orders, articles have comments.
 */
const companies = ['Acme Corporation', 'Globex']

const users: Array<{ name: string; company: number | null }> = [
  { name: 'Ada Lovelace', company: 1 },
  { name: 'Grace Hopper', company: 1 },
  { name: 'Alan Turing', company: 2 },
  { name: 'Katherine Johnson', company: null },
]

const products = [
  { sku: 'KB-101', name: 'Mechanical keyboard', price: 8900 },
  { sku: 'MS-202', name: 'Wireless mouse', price: 2900 },
  { sku: 'MN-303', name: '27-inch monitor', price: 27900 },
  { sku: 'CB-404', name: 'USB-C cable', price: 1200 },
  { sku: 'HD-505', name: 'Noise-cancelling headphones', price: 14900 },
  { sku: 'WC-606', name: 'HD webcam', price: 6900 },
]

const orders: Array<{ user: number; status: OrderStatus; items: Array<{ sku: string; qty: number }> }> = [
  { user: 2, status: 'paid', items: [{ sku: 'MN-303', qty: 1 }] },
  { user: 2, status: 'cancelled', items: [{ sku: 'WC-606', qty: 1 }] },
  {
    user: 2,
    status: 'pending',
    items: [
      { sku: 'KB-101', qty: 1 },
      { sku: 'CB-404', qty: 2 },
    ],
  },
  { user: 3, status: 'refunded', items: [{ sku: 'HD-505', qty: 1 }] },
  {
    user: 3,
    status: 'paid',
    items: [
      { sku: 'MS-202', qty: 2 },
      { sku: 'CB-404', qty: 1 },
    ],
  },
  { user: 3, status: 'pending', items: [{ sku: 'KB-101', qty: 2 }] },
  {
    user: 1,
    status: 'paid',
    items: [
      { sku: 'MN-303', qty: 2 },
      { sku: 'KB-101', qty: 1 },
    ],
  },
]

const articles = [
  {
    author: 1,
    title: 'Designing idempotent APIs',
    body: 'Retries are a fact of life. An Idempotency-Key lets a client retry a POST safely.',
    comments: [
      { author: 2, body: 'Scoping keys to the caller is the part people forget.' },
      { author: 3, body: 'And store the outcome in the same transaction as the change.' },
    ],
  },
  {
    author: 2,
    title: 'Keyset pagination in practice',
    body: 'Offsets drift when rows are inserted; a cursor on (created_at, id) does not.',
    comments: [{ author: 1, body: 'Signing the cursor keeps clients from crafting their own.' }],
  },
  { author: 3, title: 'Why GraphQL needs loaders', body: 'Without batching, every list field becomes N+1 queries.', comments: [] },
]

// A fixed clock, one minute apart, so that the demo data sorts the same way on every machine.
const DEMO_EPOCH = Date.parse('2026-01-05T09:00:00.000Z')
const at = (minute: number): string => new Date(DEMO_EPOCH + minute * 60_000).toISOString()

const SEED_LOCK = 4_242_001

/** Loads the demo data once: only into an empty database, and only one instance at a time. */
export async function seedDemoData(db: Kysely<Database>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${SEED_LOCK})`.execute(trx)
    const existing = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst()
    if (existing) return false

    let minute = 0
    const companyIds = await trx
      .insertInto('companies')
      .values(companies.map((name) => ({ name })))
      .returning('id')
      .execute()
    const userIds = await trx
      .insertInto('users')
      .values(
        users.map((user) => ({
          name: user.name,
          company_id: user.company === null ? null : companyIds[user.company - 1]!.id,
          created_at: at(minute++),
        })),
      )
      .returning('id')
      .execute()
    await trx
      .insertInto('products')
      .values(products.map((product) => ({ ...product, created_at: at(minute++) })))
      .execute()

    // Priced from the catalog above, as order-pricing.ts prices a request (src/db imports nothing
    // from the modules above it; test/db/database.test.ts checks every total is Σ qty × unit_price).
    const catalog = new Map(products.map((product) => [product.sku, product.price]))
    const priceOf = (sku: string): number => {
      const price = catalog.get(sku)
      if (price === undefined) throw new Error(`demo order names an unknown sku: ${sku}`)
      return price
    }
    for (const order of orders) {
      const items = order.items.map((item) => ({ ...item, unit_price: priceOf(item.sku) }))
      const priced = { items, total: items.reduce((sum, item) => sum + item.qty * item.unit_price, 0) }
      const createdAt = at(minute++)
      const { id } = await trx
        .insertInto('orders')
        .values({
          user_id: userIds[order.user - 1]!.id,
          status: order.status,
          total: priced.total,
          created_at: createdAt,
          updated_at: createdAt,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
      await trx
        .insertInto('order_items')
        .values(priced.items.map((item, position) => ({ ...item, order_id: id, position })))
        .execute()
    }

    for (const article of articles) {
      const createdAt = at(minute++)
      const { id } = await trx
        .insertInto('articles')
        .values({
          author_id: userIds[article.author - 1]!.id,
          title: article.title,
          body: article.body,
          created_at: createdAt,
          updated_at: createdAt,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
      for (const comment of article.comments) {
        await trx
          .insertInto('comments')
          .values({ article_id: id, author_id: userIds[comment.author - 1]!.id, body: comment.body, created_at: at(minute++) })
          .execute()
      }
    }
    return true
  })
}
