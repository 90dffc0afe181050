/**
 * The scale bench's data (docs/performance.md, "At the size users reach"): N orders and the rest in
 * proportion, the shape a shop reaches after a year, built with set-based statements
 * (generate_series) into a database migrated by the service's own migrations. Deterministic: the
 * same N gives the same rows, so two runs read the same data.
 *
 * - users N/10 (at least 40): user 1 is the big customer with 5 % of all orders, user 2 a customer
 *   with 10 orders, all pending (so it has no `order.status_changed` event), the others about 10
 *   orders each; the last user is the admin the reads are made as;
 * - orders of 2 items each from 200 products, statuses 40 % pending, 35 % paid, 15 % cancelled,
 *   10 % refunded, created over the last 6 days (inside the event log's 7-day retention);
 * - articles N/100, comments N/10: article 1 has half of them (100,000 at 2,000,000 orders);
 * - the event log in proportion: every order's `order.created`, one `order.status_changed` per
 *   order that left pending, every `article.created` and `comment.added`, numbered (relayed) in
 *   the order they happened, with the payloads the service writes.
 */
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Database } from '../src/db/schema.ts'

/** Raised whenever the statements below change what they build: a kept database of another version is rebuilt. */
export const SCALE_DATA_VERSION = 1

export const SCALE_PRODUCTS = 200
const ITEMS_PER_ORDER = 2
/** Over how long the orders and events were made, ending now. */
const SPAN = `interval '6 days'`

export interface ScaleDataSize {
  orders: number
  users: number
  companies: number
  articles: number
  comments: number
}

export function scaleDataSize(orders: number): ScaleDataSize {
  return {
    orders,
    users: Math.max(40, Math.floor(orders / 10)),
    companies: Math.max(4, Math.floor(orders / 1000)),
    articles: Math.max(10, Math.floor(orders / 100)),
    comments: Math.max(20, Math.floor(orders / 10)),
  }
}

/** The users the reads are made as. */
export const BIG_CUSTOMER = 1
export const CUSTOMER = 2
export const adminOf = (size: ScaleDataSize) => size.users
/** The article with half of all comments. */
export const BUSY_ARTICLE = 1

/**
 * The statements, in order. Order g's owner, status, items and time are functions of g; so are an
 * article's and a comment's. Each statement is one pass; the event log is written in seq order by
 * one insert over the union of what happened.
 */
export function scaleDataStatements(size: ScaleDataSize): string[] {
  const { orders: n, users, companies, articles, comments } = size
  const start = `(now() - ${SPAN})`
  const at = (fraction: string) => `(${start} + (${fraction}) * ${SPAN})::timestamptz(3)`
  const sku = (p: string) => `'SKU-' || lpad((${p})::text, 4, '0')`
  const price = (p: string) => `(500 + ((${p}) * 733) % 20000)`
  // Item k of order g: product ((g * 31 + k * 17) mod 200) + 1, qty ((g * 7 + k) mod 9) + 1.
  const product = (k: number) => `(((g * 31 + ${k * 17}) % ${SCALE_PRODUCTS}) + 1)`
  const qty = (k: number) => `(((g * 7 + ${k}) % 9) + 1)`
  const total = Array.from({ length: ITEMS_PER_ORDER }, (_, k) => `${qty(k)} * ${price(product(k))}`).join(' + ')
  const itemsJson = `json_build_array(${Array.from(
    { length: ITEMS_PER_ORDER },
    (_, k) => `json_build_object('sku', ${sku(product(k))}, 'qty', ${qty(k)}, 'unit_price', ${price(product(k))})`,
  ).join(', ')})`
  // The customer's ten orders are g = 1, 21, …, 181; every 20th order is the big customer's.
  const owner = `case when g % 20 = 0 then ${BIG_CUSTOMER} when g % 20 = 1 and g <= 181 then ${CUSTOMER} else 3 + (g % ${users - 2}) end`
  const status = `case when g % 20 = 1 and g <= 181 then 'pending'
    else (array['pending','pending','pending','pending','pending','pending','pending','pending',
      'paid','paid','paid','paid','paid','paid','paid','cancelled','cancelled','cancelled','refunded','refunded'])[((g * 7919) % 20) + 1] end`
  const text = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
  const commentArticle = `case when g <= ${Math.floor(comments / 2)} then ${BUSY_ARTICLE} else 2 + (g % ${articles - 1}) end`
  return [
    `insert into companies (id, name) select g, 'Company ' || g from generate_series(1, ${companies}) g`,
    `insert into users (id, name, company_id, created_at)
       select g, 'User ' || g, case when g % 3 = 0 then null else ((g - 1) % ${companies}) + 1 end, ${at(`g::float8 / ${users} - 1`)}
       from generate_series(1, ${users}) g`,
    `insert into products (sku, name, price, created_at)
       select ${sku('g')}, 'Product ' || g, ${price('g')}, ${start} - interval '30 days' from generate_series(1, ${SCALE_PRODUCTS}) g`,
    `insert into orders (id, user_id, status, total, created_at, updated_at)
       select g, ${owner}, ${status}, ${total}, ${at(`g::float8 / ${n}`)},
         ${at(`g::float8 / ${n}`)} + case when ${status} = 'pending' then interval '0' else interval '1 minute' end
       from generate_series(1::bigint, ${n}) g`,
    `insert into order_items (order_id, position, sku, qty, unit_price)
       select g, k, ${sku(`((g * 31 + k * 17) % ${SCALE_PRODUCTS}) + 1`)}, ((g * 7 + k) % 9) + 1,
         ${price(`((g * 31 + k * 17) % ${SCALE_PRODUCTS}) + 1`)}
       from generate_series(1::bigint, ${n}) g, generate_series(0, ${ITEMS_PER_ORDER - 1}) k`,
    `insert into articles (id, author_id, title, body, created_at, updated_at)
       select g, ((g * 13) % ${users}) + 1, 'Article ' || g || ': ' || md5(g::text),
         repeat('A paragraph of an article about orders and their items. ', 4), ${at(`g::float8 / ${articles}`)}, ${at(`g::float8 / ${articles}`)}
       from generate_series(1, ${articles}) g`,
    `insert into comments (id, article_id, author_id, body, created_at)
       select g, ${commentArticle}, ((g * 17) % ${users}) + 1, 'Comment ' || g || ' on an article.',
         greatest(${at(`g::float8 / ${comments}`)}, ${at(`(${commentArticle})::float8 / ${articles}`)})
       from generate_series(1, ${comments}) g`,
    // The event log: what happened, numbered in the order it happened (ties by kind, then id).
    `insert into outbox (topic, payload, owner_id, created_at, published_at, seq)
       select topic, payload, owner_id, happened, happened, row_number() over (order by happened, kind, record)
       from (
         select 1 as kind, o.id as record, 'order.created' as topic, o.user_id as owner_id, o.created_at as happened,
           jsonb_build_object('orderId', o.id, 'userId', o.user_id, 'order', jsonb_build_object(
             'id', o.id, 'status', 'pending', 'total', o.total, 'items', o.items, 'user_id', o.user_id,
             'created_at', ${text('o.created_at')}, 'updated_at', ${text('o.created_at')})) as payload
         from (select g as id, ${owner} as user_id, ${total} as total, ${itemsJson}::jsonb as items, ${at(`g::float8 / ${n}`)} as created_at
               from generate_series(1::bigint, ${n}) g) o
         union all
         select 2, o.id, 'order.status_changed', o.user_id, o.updated_at,
           jsonb_build_object('orderId', o.id, 'userId', o.user_id, 'from', case when o.status = 'refunded' then 'paid' else 'pending' end,
             'to', o.status, 'order', jsonb_build_object(
             'id', o.id, 'status', o.status, 'total', o.total, 'items', o.items, 'user_id', o.user_id,
             'created_at', ${text('o.created_at')}, 'updated_at', ${text('o.updated_at')}))
         from (select g as id, ${owner} as user_id, ${status} as status, ${total} as total, ${itemsJson}::jsonb as items,
                 ${at(`g::float8 / ${n}`)} as created_at, ${at(`g::float8 / ${n}`)} + interval '1 minute' as updated_at
               from generate_series(1::bigint, ${n}) g) o
         where o.status <> 'pending'
         union all
         select 3, a.id, 'article.created', null, a.created_at,
           jsonb_build_object('articleId', a.id, 'authorId', a.author_id, 'article', jsonb_build_object(
             'id', a.id, 'title', a.title, 'body', a.body, 'author_id', a.author_id,
             'created_at', ${text('a.created_at')}, 'updated_at', ${text('a.updated_at')}))
         from articles a
         union all
         select 4, c.id, 'comment.added', null, c.created_at,
           jsonb_build_object('commentId', c.id, 'articleId', c.article_id, 'authorId', c.author_id, 'comment', jsonb_build_object(
             'id', c.id, 'article_id', c.article_id, 'author_id', c.author_id, 'body', c.body, 'created_at', ${text('c.created_at')}))
         from comments c
       ) as happened
       where happened <= now()`,
    // Ids and seqs were given explicitly: move the sequences past them, so that writes go on.
    `select setval(pg_get_serial_sequence('companies', 'id'), ${companies}),
            setval(pg_get_serial_sequence('users', 'id'), ${users}),
            setval(pg_get_serial_sequence('orders', 'id'), ${n}),
            setval(pg_get_serial_sequence('articles', 'id'), ${articles}),
            setval(pg_get_serial_sequence('comments', 'id'), ${comments}),
            setval(pg_get_serial_sequence('outbox', 'id'), (select max(id) from outbox)),
            setval('outbox_seq', (select max(seq) from outbox))`,
  ]
}

/** Builds the data into a freshly migrated, empty database, and says how long each step took. */
export async function buildScaleData(db: Kysely<Database>, size: ScaleDataSize, log: (line: string) => void): Promise<void> {
  const names = ['companies', 'users', 'products', 'orders', 'order items', 'articles', 'comments', 'event log', 'sequences']
  const statements = scaleDataStatements(size)
  for (const [i, statement] of statements.entries()) {
    const started = performance.now()
    await sql.raw(statement).execute(db)
    log(`  ${names[i]}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
}
