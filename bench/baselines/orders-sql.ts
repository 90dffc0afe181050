/**
 * The SQL the REST baseline runs, as strong as a team writing it by hand can make it: each answer's
 * JSON text built by PostgreSQL in one statement (an order with its items; timestamps in the API's
 * ISO form, UTC, ms), and a keyed create in one statement.
 */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** One API order as JSON text built by PostgreSQL, in the contract's field order; `o` is the orders row. */
const ORDER_JSON = `json_build_object('id', o.id, 'status', o.status, 'total', o.total::int,
  'items', coalesce((select json_agg(json_build_object('sku', i.sku, 'qty', i.qty, 'unit_price', i.unit_price) order by i.position)
                     from order_items i where i.order_id = o.id), '[]'),
  'user_id', o.user_id, 'created_at', ${iso('o.created_at')}, 'updated_at', ${iso('o.updated_at')})::text`

/** One order: its JSON text, and what the handler checks (owner) and the ETag is made of. */
export const SELECT_ORDER_TEXT = `select ${ORDER_JSON} as body, o.user_id, o.id, ${iso('o.updated_at')} as updated_at
  from orders o where o.id = $1`

/**
 * One page as JSON text per order, one row more than asked, with the envelope's total and what
 * the next-page cursor is made of. $1: limit + 1; $2: a user id, or null for everyone's (admin).
 */
export const SELECT_ORDER_PAGE_TEXT = `select ${ORDER_JSON} as body, o.id, ${iso('o.created_at')} as created_at,
  (select count(*) from orders c where $2::int is null or c.user_id = $2::int)::int as page_total
  from orders o where $2::int is null or o.user_id = $2::int
  order by o.created_at desc, o.id desc limit $1`

/**
 * A keyed create in one statement, which writes what a correct create must: the order and its
 * items (priced from products), the key with its stored outcome (the answer a replay returns),
 * and the `order.created` outbox row with the NOTIFY that wakes the relay, all or nothing. The new
 * order's id and time are taken first, so the answer is built before anything is written; the
 * key is claimed by its insert (a concurrent request with the same key waits for it), and the
 * order is written only when the claim succeeded. No row: an unknown sku; `claimed` false: the
 * key was used already.
 * $1 user id, $2 skus, $3 quantities, $4 caller, $5 key, $6 request hash.
 */
export const CREATE_ORDER_KEYED = `with input as (
    select t.sku, t.qty, (t.n - 1)::int as position from unnest($2::text[], $3::int[]) with ordinality as t(sku, qty, n)
  ), priced as (
    select i.sku, i.qty, i.position, p.price from input i join products p on p.sku = i.sku
  ), fresh as (
    select nextval(pg_get_serial_sequence('orders', 'id'))::int as id, now()::timestamptz(3) as at,
      (select sum(qty * price) from priced)::int as total
    where (select count(*) from priced) = cardinality($2::text[])
  ), answer as (
    select f.id, f.at, f.total, json_build_object('id', f.id, 'status', 'pending', 'total', f.total,
      'items', (select json_agg(json_build_object('sku', sku, 'qty', qty, 'unit_price', price) order by position) from priced),
      'user_id', $1::int, 'created_at', ${iso('f.at')}, 'updated_at', ${iso('f.at')}) as body
    from fresh f
  ), claimed as (
    insert into idempotency_keys (caller, key, request_hash, status, body, expires_at)
    select $4, $5, $6, 201, a.body::jsonb, now() + interval '24 hours' from answer a
    on conflict do nothing returning 1
  ), new_order as (
    insert into orders (id, user_id, status, total, created_at, updated_at)
    select a.id, $1, 'pending', a.total, a.at, a.at from answer a where exists (select 1 from claimed) returning id
  ), new_items as (
    insert into order_items (order_id, position, sku, qty, unit_price)
    select o.id, p.position, p.sku, p.qty, p.price from new_order o, priced p returning 1
  ), recorded as (
    insert into outbox (topic, payload, owner_id)
    select 'order.created', json_build_object('orderId', o.id, 'userId', $1::int, 'order', a.body)::jsonb, $1
    from new_order o, answer a returning id
  )
  select a.body::text as body, a.id, ${iso('a.at')} as updated_at, exists (select 1 from claimed) as claimed,
    (select count(*) from new_items) as items, (select pg_notify('api_outbox', '') from recorded) as notified
  from answer a`
