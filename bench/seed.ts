/**
 * The bench data set, deterministic and loaded with a few set-based statements (generate_series),
 * so the full size (200 companies, 2,000 users, 20,000 orders of 3 items) loads in seconds.
 * The schema comes from the service's own migrations.
 */
import { sql } from 'kysely'
import { createDatabase, migrateToLatest } from '../src/db/database.ts'

export interface DataSetSize {
  companies: number
  users: number
  orders: number
}

export const FULL_DATA_SET: DataSetSize = { companies: 200, users: 2000, orders: 20_000 }
/** The smoke test's size: every scenario still finds its records. */
export const TINY_DATA_SET: DataSetSize = { companies: 4, users: 40, orders: 400 }

export const ITEMS_PER_ORDER = 3
export const PRODUCT_COUNT = 20

/** Order `id` belongs to this user (orders are dealt to users in turn). */
export const ownerOfOrder = (size: DataSetSize, orderId: number): number => ((orderId - 1) % size.users) + 1

export const productSku = (n: number): string => `SKU-${String(n).padStart(3, '0')}`

/** The statements, in order; `g` runs over each table's ids, timestamps are one second apart from a fixed epoch. */
export function seedStatements(size: DataSetSize): string[] {
  const epoch = `timestamptz '2026-01-05T09:00:00Z'`
  const sku = (n: string) => `'SKU-' || lpad((${n})::text, 3, '0')`
  return [
    `insert into companies (id, name) select g, 'Company ' || g from generate_series(1, ${size.companies}) g`,
    `insert into users (id, name, company_id, created_at)
       select g, 'User ' || g, ((g - 1) % ${size.companies}) + 1, ${epoch} + g * interval '1 second'
       from generate_series(1, ${size.users}) g`,
    `insert into products (sku, name, price, created_at)
       select ${sku('g')}, 'Product ' || g, 500 + g * 250, ${epoch} from generate_series(1, ${PRODUCT_COUNT}) g`,
    // Item p of order g: product ((g + p) mod 20) + 1, qty (g + p) mod 3 + 1; the total is theirs.
    `insert into orders (id, user_id, status, total, created_at, updated_at)
       select g, ((g - 1) % ${size.users}) + 1, (array['pending', 'paid', 'cancelled', 'refunded'])[(g % 4) + 1],
         (select sum(((g + p) % 3 + 1) * (500 + (((g + p) % ${PRODUCT_COUNT}) + 1) * 250)) from generate_series(0, ${ITEMS_PER_ORDER - 1}) p),
         ${epoch} + g * interval '1 second', ${epoch} + g * interval '1 second'
       from generate_series(1, ${size.orders}) g`,
    `insert into order_items (order_id, position, sku, qty, unit_price)
       select g, p, ${sku(`((g + p) % ${PRODUCT_COUNT}) + 1`)}, (g + p) % 3 + 1, 500 + (((g + p) % ${PRODUCT_COUNT}) + 1) * 250
       from generate_series(1, ${size.orders}) g, generate_series(0, ${ITEMS_PER_ORDER - 1}) p`,
    // Ids were given explicitly: move the identity sequences past them for the POST scenario.
    `select setval(pg_get_serial_sequence('companies', 'id'), ${size.companies}),
            setval(pg_get_serial_sequence('users', 'id'), ${size.users}),
            setval(pg_get_serial_sequence('orders', 'id'), ${size.orders})`,
    'analyze',
  ]
}

/** Migrates and seeds a fresh database: a PostgreSQL URL, or a PGlite data directory. */
export async function seedDatabase(target: { url: string } | { dataDir: string }, size: DataSetSize): Promise<void> {
  const handle = await createDatabase('url' in target ? { url: target.url, statementTimeoutMs: 0 } : { dataDir: target.dataDir })
  try {
    await migrateToLatest(handle.db)
    for (const statement of seedStatements(size)) await sql.raw(statement).execute(handle.db)
  } finally {
    await handle.close()
  }
}
