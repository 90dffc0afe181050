/** All SQL for orders and their items. Plain functions taking the database or a transaction first. */
import { type RawBuilder, sql } from 'kysely'
import type { OrderItemRow, OrderRow } from '../../db/schema.ts'
import type { Order, OrderItem, OrderStatus } from '../../contract/contract-types.ts'
import type { JsonText } from '../../db/json-text.ts'
import { afterPosition, orderColumns } from '../../db/keyset.ts'
import type { Executor } from '../../db/executor.ts'
import type { StatementSteps } from '../../db/write.ts'
import { nextUpdatedAt } from '../../db/updated-at.ts'
import { MAX_ORDER_TOTAL, type PricedItem } from './order-pricing.ts'
import { anyInteger, anyText } from '../../db/any-of.ts'
import { compiledByShape, compiledStatement, type StatementTarget } from '../../db/compiled-statement.ts'
import { rowsPerParent } from '../../db/rows-per-parent.ts'
import { countedRows, countedRowsValues, type PageRow, pageWithTotal, rowsAndTotal } from '../../db/row-counts.ts'
import { eventRecordFrom, wakeRelaysAfter } from '../../db/repositories/outbox.ts'
import { isoTimestamp } from '../../db/iso-timestamp.ts'
import { type UserRelations, type UserWithRelatedRow, userWithRelatedOf } from '../users/users.repository.ts'

export type OrderSortField = 'created_at' | 'total' | 'id'

export interface OrderFilter {
  userId?: number | undefined
  status?: OrderStatus | undefined
}

export interface OrderPageQuery extends OrderFilter {
  sort: { field: OrderSortField; descending: boolean }
  after: [string | number, number] | undefined
  limit: number
}

export async function findOrder(db: Executor, id: number, options: { lock?: boolean } = {}): Promise<OrderRow | undefined> {
  let query = db.selectFrom('orders').selectAll().where('id', '=', id)
  if (options.lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/**
 * GET /orders/{id}'s statement, compiled once (when the service is built): its text never changes,
 * only the id is bound per request, so no query is built or compiled per read.
 * The row is the order as the API shows it, timestamps formatted and items aggregated by
 * PostgreSQL, with nothing left to do in JavaScript but rename the two timestamps.
 */
export function compileFindOrderRecord(
  target: StatementTarget,
): (executor: Executor, id: number) => Promise<OrderWithRelatedRow | undefined> {
  const { columns } = orderWithRelated({})
  const compiled = sql`select ${columns} from orders where orders.id = ${0}`.compile(target.db)
  if (compiled.parameters.length !== 1) throw new Error('the order statement must take its id as its only parameter')
  const statement = compiledStatement<OrderWithRelatedRow>(compiled.sql, target)
  return async (executor, id) => (await statement(executor, [id]))[0]
}

/**
 * An order as REST sends it: its JSON text, built by PostgreSQL, with what the service checks
 * (the owner) and what the ETag and a cursor are made of (id, version, sort keys).
 */
export interface OrderTextRow {
  json: JsonText<Order>
  id: number
  user_id: number
  total: number
  created_at: string
  updated_at: string
}

/** The item fields an order's statement reads (a plan reads only those its selection names, decisions §13). */
export interface ItemColumns {
  sku: boolean
  qty: boolean
  unit_price: boolean
}

const EVERY_ITEM_COLUMN: ItemColumns = { sku: true, qty: true, unit_price: true }

/**
 * The items of the outer `orders` row as a JSON array, in stored sequence: the one way every order
 * statement reads them (REST's JSON text and the records of GraphQL's plans alike), one scalar
 * subquery per order, so an order and its items are one statement. Each item is a row_to_json of
 * its three fields in the contract's order, and array_to_json joins them: compact text, which REST
 * sends as it is (json_build_object and json_agg write spaces and line breaks). The item's fields
 * are a lateral subquery that PostgreSQL flattens into row_to_json(ROW(sku, qty, unit_price)): no
 * subplan per item, as a scalar `(select row_to_json(…))` per item was. The order by is inside the
 * aggregate, on the items' own position (PostgreSQL 16 and later plan a Sort of an order's few items
 * for it, never of the page: test/db/order-list-plan.test.ts).
 */
const itemsJson = itemsJsonOf(EVERY_ITEM_COLUMN)

/** itemsJson with only `columns` in each item (in the contract's order); an item of none is `{}`. */
function itemsJsonOf(columns: ItemColumns): RawBuilder<unknown> {
  const read = (['sku', 'qty', 'unit_price'] as const).filter((column) => columns[column]).map((column) => sql.ref(`i.${column}`))
  // row_to_json of a lateral subquery with no column writes `{}`, as the item of no field selected is.
  const fields = read.length === 0 ? sql`` : sql.join(read)
  return sql`(select coalesce(array_to_json(array_agg(row_to_json(item) order by i.position)), '[]'::json)
  from order_items as i cross join lateral (select ${fields}) as item where i.order_id = orders.id)`
}

/**
 * The outer `orders` row as an OrderTextRow: the order as openapi.yaml's Order writes it (its
 * fields in the contract's order, timestamps as the API writes them), as compact JSON text
 * (row_to_json writes no spaces, unlike json_build_object).
 */
const orderTextColumns = sql`(select row_to_json(o)::text from (select orders.id, orders.status, orders.total, ${itemsJson} as items,
    orders.user_id, ${isoTimestamp(sql.ref('orders.created_at'))} as created_at, ${isoTimestamp(sql.ref('orders.updated_at'))} as updated_at) as o) as json,
  orders.id, orders.user_id, orders.total, ${isoTimestamp(sql.ref('orders.created_at'))} as created_at,
  ${isoTimestamp(sql.ref('orders.updated_at'))} as updated_at`

/** GET /orders/{id}'s statement as text (see compileFindOrderRecord), compiled once. */
export function compileFindOrderText(target: StatementTarget): (executor: Executor, id: number) => Promise<OrderTextRow | undefined> {
  const compiled = sql`select ${orderTextColumns} from orders where orders.id = ${0}`.compile(target.db)
  if (compiled.parameters.length !== 1) throw new Error('the order statement must take its id as its only parameter')
  const statement = compiledStatement<OrderTextRow>(compiled.sql, target)
  return async (executor, id) => (await statement(executor, [id]))[0]
}

/** Orders as the API shows them by id (GraphQL's `nodes`), in one statement; a missing id has no row. */
export async function findOrderRecordsByIds(db: Executor, ids: readonly number[]): Promise<OrderWithRelatedRow[]> {
  if (ids.length === 0) return []
  const { columns } = orderWithRelated({})
  const result = await sql<OrderWithRelatedRow>`select ${columns} from orders where orders.id = ${anyInteger(ids)}`.execute(db)
  return result.rows
}

/**
 * The items of many orders in one statement, in each order's stored sequence, as flat rows: for the
 * writes, which read an order they have locked (orders.service.ts withItems). Reads take them
 * aggregated in the order's own statement (itemsJson).
 */
export async function findItemsOfOrders(db: Executor, orderIds: readonly number[]): Promise<OrderItemRow[]> {
  if (orderIds.length === 0) return []
  return db
    .selectFrom('order_items')
    .selectAll()
    .where('order_id', '=', anyInteger(orderIds))
    .orderBy('order_id')
    .orderBy('position')
    .execute()
}

/** One keyset page of orders as REST sends them (limit + 1 OrderTextRows), in one statement. */
function orderPageAsText(query: OrderPageQuery): RawBuilder<OrderTextRow> {
  const conditions = filterConditions(query, 'orders')
  if (query.after) conditions.push(afterPosition(query.sort, query.after))
  return sql<OrderTextRow>`
    select ${orderTextColumns} from ${sql.table('orders')} ${whereAll(conditions)}
    order by ${orderBy(query)} limit ${query.limit + 1}`
}

/** How many orders a filter matches, from the counts kept where orders change (decisions §17). */
function ordersMatching(filter: OrderFilter) {
  return countedRows('orders', { ownerId: filter.userId, status: filter.status })
}

/** A page statement with, when asked, the filter's total in the same statement (pageWithTotal). */
function withTotalWhenAsked<Row>(query: OrderPageQuery & { withTotal: boolean }, page: RawBuilder<Row>): RawBuilder<PageRow<Row>> {
  // Without a total the statement is the page itself, whose rows are PageRows with every column set.
  return query.withTotal ? pageWithTotal(ordersMatching(query), page) : (page as RawBuilder<PageRow<Row>>)
}

/** The values ordersMatching binds, when the statement carries a total. */
function totalValues(query: OrderPageQuery & { withTotal: boolean }): unknown[] {
  return query.withTotal ? countedRowsValues('orders', { ownerId: query.userId, status: query.status }) : []
}

/** A page statement's rows, and its total when it carried one. */
function pageAndTotal<Row, Key extends keyof Row>(
  rows: ReadonlyArray<PageRow<Row>>,
  key: Key,
  withTotal: boolean,
): { rows: Row[]; total: number | undefined } {
  // Without a total the statement was the page itself: every row is one of its rows.
  return withTotal ? rowsAndTotal(rows, key) : { rows: rows as Row[], total: undefined }
}

/** A page query's shape: what its statement's text depends on (not the values it binds). */
function pageShape(query: OrderPageQuery): string {
  return `${query.userId === undefined ? '' : 'u'}${query.status === undefined ? '' : 's'}${query.after ? 'a' : ''}:${query.sort.descending ? '-' : ''}${query.sort.field}`
}

/** The values a filter binds, in the order filterConditions writes them. */
function filterValues(filter: OrderFilter): unknown[] {
  return [...(filter.userId === undefined ? [] : [filter.userId]), ...(filter.status === undefined ? [] : [filter.status, filter.status])]
}

/** The values a page's position and limit bind, in the order afterPosition and the LIMIT write them. */
function positionValues(query: OrderPageQuery): unknown[] {
  const after = query.after ? (query.sort.field === 'id' ? [query.after[1]] : query.after) : []
  return [...after, query.limit + 1]
}

/**
 * A page's ORDER BY: the filter's columns, then the sort's. Within the filter they are fixed, so
 * this is the sort's order, and it is exactly the columns of the index that serves the filter and
 * the sort (migrations 0001, 0010): with the status filter written as a range (filterConditions),
 * PostgreSQL can take no other index without sorting the whole filter.
 */
function orderBy(query: OrderPageQuery): RawBuilder<unknown> {
  const direction = query.sort.descending ? 'desc' : 'asc'
  const filtered: Array<readonly [string, 'asc' | 'desc']> = [
    ...(query.userId === undefined ? [] : [['user_id', direction] as const]),
    ...(query.status === undefined ? [] : [['status', direction] as const]),
  ]
  return sql.join([...filtered, ...orderColumns(query.sort)].map(([column, way]) => sql`${sql.ref(`orders.${column}`)} ${sql.raw(way)}`))
}

/**
 * The order list statements, each compiled once per shape (src/db/compiled-statement.ts): a page
 * as JSON text (REST), a page of the columns a plan selected (GraphQL's Query.orders) and the recent orders of many
 * users (GraphQL's User.orders). Made once per service, like compileFindOrderRecord.
 */
export function compileOrderListStatements(target: StatementTarget) {
  const pageAsText = compiledByShape(target, {
    shapeOf: (query: OrderPageQuery & { withTotal: boolean }) => `${pageShape(query)}${query.withTotal ? ':total' : ''}`,
    build: (query) => withTotalWhenAsked(query, orderPageAsText(query)),
    parametersOf: (query) => [...totalValues(query), ...filterValues(query), ...positionValues(query)],
  })
  const pageOfColumns = compiledByShape(target, {
    shapeOf: (query: OrderPageQuery & { withTotal: boolean; columns: OrderColumns }) =>
      `${pageShape(query)}${query.withTotal ? ':total' : ''}:${JSON.stringify(query.columns)}`,
    build: (query) => withTotalWhenAsked(query, orderPageOfColumns(query)),
    parametersOf: (query) => [...totalValues(query), ...filterValues(query), ...positionValues(query)],
  })
  const recentOfUsers = compiledByShape(target, {
    shapeOf: (query: { userIds: readonly number[]; last: number; relations: OrderRelations }) => JSON.stringify(query.relations),
    build: recentOrdersOfUsers,
    parametersOf: (query) => [query.userIds, query.last],
  })
  const userWithRecent = compiledByShape(target, {
    shapeOf: (query: { userId: number; userRelations: UserRelations; last: number }) => JSON.stringify(query.userRelations),
    build: userWithRecentOrders,
    // The LIMIT stands before the user's id in the text: the orders' subquery is in the select list.
    parametersOf: (query) => [query.last, query.userId],
  })
  return {
    /** A user with its relations and its `last` most recent orders, oldest first; undefined when no such user. */
    findUserWithRecentOrders: async (
      executor: Executor,
      userId: number,
      userRelations: UserRelations,
      last: number,
    ): Promise<UserWithRecentOrdersRow | undefined> => (await userWithRecent(executor, { userId, userRelations, last }))[0],
    /**
     * One keyset page of orders as REST sends them (limit + 1 rows), and with `withTotal` the
     * number of orders the filter matches, read in the same statement.
     */
    findOrderPageAsText: async (executor: Executor, query: OrderPageQuery, options: { withTotal: boolean }) =>
      pageAndTotal(await pageAsText(executor, { ...query, withTotal: options.withTotal }), 'id', options.withTotal),
    /** One keyset page of orders (limit + 1 rows) with the columns asked for, and the total when asked. */
    findOrderPageOfColumns: async (executor: Executor, query: OrderPageQuery, columns: OrderColumns, options: { withTotal: boolean }) =>
      pageAndTotal(await pageOfColumns(executor, { ...query, withTotal: options.withTotal, columns }), 'id', options.withTotal),
    /** The `last` most recent orders of each user with their items and the relations asked for. */
    findRecentOrdersOfUsers: async (
      executor: Executor,
      userIds: readonly number[],
      last: number,
      relations: OrderRelations,
    ): Promise<OrderWithRelatedRow[]> => (userIds.length === 0 ? [] : recentOfUsers(executor, { userIds: [...userIds], last, relations })),
  }
}

/**
 * The conditions of a filter on the orders table named `table`. The status is a range of one
 * value, not an equality: PostgreSQL drops an equality's column from the order it must produce,
 * then weighs the primary key against the filter's index by the status's share, which a prepared
 * statement's generic plan takes as a quarter for every status; for a rare status it would walk
 * the primary key through most of the table. A range keeps the column in the order (orderBy), and
 * only the filter's index gives that order (decisions §17).
 */
function filterConditions(filter: OrderFilter, table: string): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = []
  if (filter.userId !== undefined) conditions.push(sql<boolean>`${sql.ref(`${table}.user_id`)} = ${filter.userId}`)
  if (filter.status !== undefined)
    conditions.push(sql<boolean>`${sql.ref(`${table}.status`)} between ${filter.status} and ${filter.status}`)
  return conditions
}

function whereAll(conditions: readonly RawBuilder<boolean>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`` : sql`where ${sql.join(conditions, sql` and `)}`
}

/** What an order is read with in the same statement (GraphQL's plans): its owner, with the owner's relations. */
export interface OrderRelations {
  user?: UserRelations | undefined
}

/**
 * An order as a statement that reads it with its relations gives it: its items as the API shows
 * them, in stored sequence; its timestamps as the API writes them (named apart from the columns, so
 * that ORDER BY created_at keeps meaning the column and its index); with the owner asked for, the
 * owner's columns.
 */
export type OrderWithRelatedRow = Pick<OrderRow, 'id' | 'status' | 'total' | 'user_id'> & {
  items: OrderItem[]
  created: string
  updated: string
} & Partial<UserWithRelatedRow>

/**
 * The select list and joins of an OrderWithRelatedRow over `orders`. The items are itemsJson, as
 * in every order statement; the owner and its company are joined as plain columns: building them
 * as JSON too cost PostgreSQL 0.25-0.4 ms more per page of 50 orders and saved the server at most
 * 0.05 ms (bench/analysis.md).
 */
function orderWithRelated(relations: OrderRelations): { columns: RawBuilder<unknown>; joins: RawBuilder<unknown> } {
  const owner = relations.user
  return {
    columns: sql`orders.id, orders.status, orders.total, ${itemsJson} as items, orders.user_id,
      ${isoTimestamp(sql.ref('orders.created_at'))} as created, ${isoTimestamp(sql.ref('orders.updated_at'))} as updated${owner ? sql`, owner.*` : sql``}`,
    joins: owner ? sql`left join lateral ${userWithRelatedOf(sql.ref('orders.user_id'), owner)} as owner on true` : sql``,
  }
}

/**
 * The order fields a page statement of a plan reads besides its id and owner's id (always read: the
 * record's key, Order.user's and the ownership rule's): those the selection names and the page's sort
 * key (orders.plan.ts, orders.service.ts), the items with only the item fields selected (decisions §13).
 */
export interface OrderColumns {
  status: boolean
  total: boolean
  created: boolean
  updated: boolean
  items: ItemColumns | undefined
}

/**
 * An order as a plan's page statement reads it: its id and owner's id, and the fields of
 * OrderColumns asked for (an item with only the item fields asked for).
 */
export type OrderColumnsRow = Pick<OrderRow, 'id' | 'user_id'> &
  Partial<Pick<OrderRow, 'status' | 'total'> & { items: Array<Partial<OrderItem>>; created: string; updated: string }>

/** One keyset page of orders (limit + 1 rows) with the columns asked for, in one statement (no join: the owners are read apart). */
function orderPageOfColumns(query: OrderPageQuery & { columns: OrderColumns }): RawBuilder<OrderColumnsRow> {
  const { columns } = query
  const read = [
    sql`orders.id`,
    sql`orders.user_id`,
    ...(columns.status ? [sql`orders.status`] : []),
    ...(columns.total ? [sql`orders.total`] : []),
    ...(columns.items ? [sql`${itemsJsonOf(columns.items)} as items`] : []),
    ...(columns.created ? [sql`${isoTimestamp(sql.ref('orders.created_at'))} as created`] : []),
    ...(columns.updated ? [sql`${isoTimestamp(sql.ref('orders.updated_at'))} as updated`] : []),
  ]
  const conditions = filterConditions(query, 'orders')
  if (query.after) conditions.push(afterPosition(query.sort, query.after))
  return sql<OrderColumnsRow>`
    select ${sql.join(read)} from orders ${whereAll(conditions)}
    order by ${orderBy(query)} limit ${query.limit + 1}`
}

/**
 * The `last` most recent orders of each user with their items and the relations asked for, in
 * one statement (GraphQL's User.orders): a lateral join over the user ids, each side an index
 * range scan on (user_id, created_at, id).
 */
function recentOrdersOfUsers(query: {
  userIds: readonly number[]
  last: number
  relations: OrderRelations
}): RawBuilder<OrderWithRelatedRow> {
  const { columns, joins } = orderWithRelated(query.relations)
  return rowsPerParent<OrderWithRelatedRow>({
    table: 'orders',
    parentColumn: 'user_id',
    parentIds: query.userIds,
    newestFirst: true,
    limit: query.last,
    columns,
    joins,
  })
}

/**
 * A user with its relations and its `last` most recent orders (oldest first, each with its items,
 * as JSON), in one statement: GraphQL's `user(id) { … orders(last: N) { … } }` plan, the user
 * statement and the User.orders statement as one.
 */
function userWithRecentOrders(query: { userId: number; userRelations: UserRelations; last: number }): RawBuilder<UserWithRecentOrdersRow> {
  const { columns } = orderWithRelated({})
  return sql<UserWithRecentOrdersRow>`
    select owner.*, (
      select coalesce(json_agg(json_build_object('id', r.id, 'status', r.status, 'total', r.total, 'items', r.items,
        'user_id', r.user_id, 'created', r.created, 'updated', r.updated) order by r.at, r.id), '[]'::json)
      from (
        select ${columns}, orders.created_at as at from orders where orders.user_id = owner.user__id
        order by orders.created_at desc, orders.id desc limit ${query.last}
      ) r) as recent_orders
    from ${userWithRelatedOf(sql<number>`${query.userId}`, query.userRelations)} as owner`
}

/** A user's row with its recent orders (userWithRecentOrders). */
export type UserWithRecentOrdersRow = UserWithRelatedRow & { recent_orders: OrderWithRelatedRow[] }

export async function findProductPrices(db: Executor, skus: readonly string[]): Promise<Map<string, number>> {
  if (skus.length === 0) return new Map()
  const rows = await db.selectFrom('products').select(['sku', 'price']).where('sku', '=', anyText(skus)).execute()
  return new Map(rows.map((row) => [row.sku, row.price]))
}

/** What a new order is made of: its buyer and the items asked for. */
export interface NewOrder {
  userId: number
  items: ReadonlyArray<{ sku: string; qty: number }>
}

/**
 * What the new order's statement answers besides the order: what explains a refusal. `prices`,
 * only when nothing was written, has the price of each sku some product has (a sku no product has
 * is absent).
 */
export interface NewOrderRow {
  buyer_exists: boolean
  prices: Array<{ sku: string; price: number }> | null
}

/**
 * A new order in one statement (src/db/write.ts, StatementWork): the buyer's check and the items
 * priced from the catalogue (each sku read once per item, duplicates alike); `checked`, the new
 * order's id (its sequence) and time with its total, only when `proceeds`, the buyer exists, every
 * sku has a product and the total is at most MAX_ORDER_TOTAL (order-pricing.ts: refused there
 * alike, in the same words); `written`, the order as the API shows it; then the order, its items
 * and its `order.created` event made from it, the relays woken when the event was recorded.
 * Positions are the items' sequence, from 0. The text never changes (compiled once).
 */
export const newOrderStatement: StatementSteps<NewOrder> = {
  steps: (order, proceeds) => sql`new_order as (
    select ${order.userId}::int as user_id, ${MAX_ORDER_TOTAL}::bigint as max_total
  ), buyer as (
    select exists (select from users, new_order where users.id = new_order.user_id) as known
  ), requested as (
    select item.sku, item.qty, (item.n - 1)::int as position
    from unnest(${order.items.map((item) => item.sku)}::text[], ${order.items.map((item) => item.qty)}::int[])
      with ordinality as item(sku, qty, n)
  ), priced as (
    select requested.position, requested.sku, requested.qty, products.price as unit_price
    from requested join products on products.sku = requested.sku
  ), checked as materialized (
    select nextval(pg_get_serial_sequence('orders', 'id'))::int as id, now()::timestamptz(3) as created_at, pricing.total
    from new_order, buyer,
      (select coalesce(sum(priced.qty::bigint * priced.unit_price), 0)::bigint as total, count(*) as known from priced) as pricing
    where ${proceeds} and buyer.known and pricing.known = (select count(*) from requested) and pricing.total <= new_order.max_total
  ), written as (
    select checked.id, checked.created_at, checked.total, jsonb_build_object('id', checked.id, 'status', 'pending',
      'total', checked.total,
      'items', (select jsonb_agg(jsonb_build_object('sku', priced.sku, 'qty', priced.qty, 'unit_price', priced.unit_price)
        order by priced.position) from priced),
      'user_id', new_order.user_id, 'created_at', ${isoTimestamp(sql.ref('checked.created_at'))},
      'updated_at', ${isoTimestamp(sql.ref('checked.created_at'))}) as value
    from checked, new_order
  ), inserted as (
    insert into orders (id, user_id, status, total, created_at, updated_at)
    select written.id, new_order.user_id, 'pending', written.total, written.created_at, written.created_at from written, new_order
  ), inserted_items as (
    insert into order_items (order_id, position, sku, qty, unit_price)
    select written.id, priced.position, priced.sku, priced.qty, priced.unit_price from written, priced
  ), recorded as (
    ${eventRecordFrom(
      'order.created',
      // The event carries the order as it was created, not as a subscriber later finds it.
      sql`jsonb_build_object('orderId', written.id, 'userId', new_order.user_id, 'order', written.value)`,
      sql<number>`new_order.user_id`,
      sql`written, new_order`,
    )}
  )`,
  result: 'written',
  columns: sql`(select buyer.known from buyer) as buyer_exists,
    (select jsonb_agg(jsonb_build_object('sku', priced.sku, 'price', priced.unit_price)) from priced
      where not exists (select from written)) as prices,
    (${wakeRelaysAfter('recorded')}) as notified`,
  parametersOf: (order) => [
    order.userId,
    MAX_ORDER_TOTAL,
    order.items.map((item) => item.sku),
    order.items.map((item) => item.qty),
    'order.created',
  ],
}

export async function replaceOrderItems(db: Executor, orderId: number, items: readonly PricedItem[]): Promise<OrderItemRow[]> {
  await db.deleteFrom('order_items').where('order_id', '=', orderId).execute()
  if (items.length === 0) return []
  return db
    .insertInto('order_items')
    .values(items.map((item, position) => ({ order_id: orderId, position, sku: item.sku, qty: item.qty, unit_price: item.unit_price })))
    .returningAll()
    .execute()
}

export async function updateOrder(db: Executor, id: number, changes: { status?: OrderStatus; total?: number }): Promise<OrderRow> {
  return db
    .updateTable('orders')
    .set({ ...changes, updated_at: nextUpdatedAt() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function deleteOrder(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('orders').where('id', '=', id).execute()
}
