/**
 * The SQL the REST baseline runs: an order with its items built as JSON in PostgreSQL, in one
 * statement, as a team writing it by hand would (timestamps in the API's ISO form, UTC, ms).
 */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** The columns of one API order, in the contract's order; `o` is the orders row. */
export const ORDER_COLUMNS = `o.id, o.status, o.total::int as total,
  coalesce((select json_agg(json_build_object('sku', i.sku, 'qty', i.qty, 'unit_price', i.unit_price) order by i.position)
            from order_items i where i.order_id = o.id), '[]') as items,
  o.user_id, ${iso('o.created_at')} as created_at, ${iso('o.updated_at')} as updated_at`

export interface OrderItemJson {
  sku: string
  qty: number
  unit_price: number
}

export type OrderJson = {
  id: number
  status: string
  total: number
  items: OrderItemJson[]
  user_id: number
  created_at: string
  updated_at: string
}

export const SELECT_ORDER = `select ${ORDER_COLUMNS} from orders o where o.id = $1`

/**
 * One page, newest first, one row more than asked (to know whether a next page exists), and the
 * envelope's total in the same statement (an uncorrelated subquery PostgreSQL runs once).
 * $1: limit + 1; $2: a user id, or null for everyone's orders (admin).
 */
export const SELECT_ORDER_PAGE = `select ${ORDER_COLUMNS},
  (select count(*) from orders c where $2::int is null or c.user_id = $2::int)::int as page_total
  from orders o where $2::int is null or o.user_id = $2::int
  order by o.created_at desc, o.id desc limit $1`
