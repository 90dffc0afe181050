/**
 * The batching tests' data (test/graphql/batching.test.ts, test/plugins/request-cost.test.ts): 60
 * more users named 'Load user N', a third of them without a company, each with two pending orders
 * of one item, so that a page of 1, 10 or 50 users or orders is full.
 */
import { type Kysely, sql } from 'kysely'
import type { Database } from '../src/db/schema.ts'

export async function insertLoadUsers(db: Kysely<Database>): Promise<void> {
  await sql`
    insert into users (name, company_id)
    select 'Load user ' || n, case when n % 3 = 0 then null else 1 + n % 2 end from generate_series(1, 60) as n`.execute(db)
  await sql`
    insert into orders (user_id, status, total, created_at, updated_at)
    select u.id, 'pending', 8900, now() - (u.id || ' minutes')::interval - (k || ' seconds')::interval, now()
    from users u cross join generate_series(1, 2) as k where u.name like 'Load user %'`.execute(db)
  await sql`
    insert into order_items (order_id, position, sku, qty, unit_price)
    select o.id, 0, 'KB-101', 1, 8900 from orders o where not exists (select 1 from order_items i where i.order_id = o.id)`.execute(db)
}
