/** All SQL for orders and their items. Plain functions taking the database or a transaction first. */
import { type RawBuilder, sql } from 'kysely'
import type { OrderItemRow, OrderRow } from '../../db/schema.ts'
import type { Order, OrderItem, OrderStatus } from '../../contract/contract-types.ts'
import type { JsonText } from '../../db/json-text.ts'
import { afterPosition, orderColumns } from '../../db/keyset.ts'
import type { Executor } from '../../db/executor.ts'
import { nextUpdatedAt } from '../../db/updated-at.ts'
import type { PricedItem } from './order-pricing.ts'
import { anyInteger, anyText } from '../../db/any-of.ts'
import { compiledByShape, compiledStatement } from '../../db/compiled-statement.ts'
import { rowsPerParent } from '../../db/rows-per-parent.ts'
import { countedRows, countedRowsValues, type PageRow, pageWithTotal, rowsAndTotal } from '../../db/row-counts.ts'
import { wakeRelaysAfter } from '../../db/repositories/outbox.ts'
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
export function compileFindOrderRecord(db: Executor): (executor: Executor, id: number) => Promise<OrderWithRelatedRow | undefined> {
  const { columns } = orderWithRelated({})
  const compiled = sql`select ${columns} from orders where orders.id = ${0}`.compile(db)
  if (compiled.parameters.length !== 1) throw new Error('the order statement must take its id as its only parameter')
  const statement = compiledStatement<OrderWithRelatedRow>(compiled.sql)
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
const itemsJson = sql`(select coalesce(array_to_json(array_agg(row_to_json(item) order by i.position)), '[]'::json)
  from order_items as i cross join lateral (select i.sku, i.qty, i.unit_price) as item where i.order_id = orders.id)`

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
export function compileFindOrderText(db: Executor): (executor: Executor, id: number) => Promise<OrderTextRow | undefined> {
  const compiled = sql`select ${orderTextColumns} from orders where orders.id = ${0}`.compile(db)
  if (compiled.parameters.length !== 1) throw new Error('the order statement must take its id as its only parameter')
  const statement = compiledStatement<OrderTextRow>(compiled.sql)
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
 * as JSON text (REST), a page with relations (GraphQL's Query.orders) and the recent orders of many
 * users (GraphQL's User.orders). Made once per service, like compileFindOrderRecord.
 */
export function compileOrderListStatements(db: Executor) {
  const pageAsText = compiledByShape(db, {
    shapeOf: (query: OrderPageQuery & { withTotal: boolean }) => `${pageShape(query)}${query.withTotal ? ':total' : ''}`,
    build: (query) => withTotalWhenAsked(query, orderPageAsText(query)),
    parametersOf: (query) => [...totalValues(query), ...filterValues(query), ...positionValues(query)],
  })
  const pageWithRelated = compiledByShape(db, {
    shapeOf: (query: OrderPageQuery & { withTotal: boolean; relations: OrderRelations }) =>
      `${pageShape(query)}${query.withTotal ? ':total' : ''}:${JSON.stringify(query.relations)}`,
    build: (query) => withTotalWhenAsked(query, orderPageWithRelated(query)),
    parametersOf: (query) => [...totalValues(query), ...filterValues(query), ...positionValues(query)],
  })
  const recentOfUsers = compiledByShape(db, {
    shapeOf: (query: { userIds: readonly number[]; last: number; relations: OrderRelations }) => JSON.stringify(query.relations),
    build: recentOrdersOfUsers,
    parametersOf: (query) => [query.userIds, query.last],
  })
  const userWithRecent = compiledByShape(db, {
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
    /** One keyset page of orders (limit + 1 rows) with their items and the relations asked for, and the total when asked. */
    findOrderPageWithRelated: async (
      executor: Executor,
      query: OrderPageQuery,
      relations: OrderRelations,
      options: { withTotal: boolean },
    ) => pageAndTotal(await pageWithRelated(executor, { ...query, withTotal: options.withTotal, relations }), 'id', options.withTotal),
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

/** One keyset page of orders (limit + 1 rows) with their items and the relations asked for, in one statement. */
function orderPageWithRelated(query: OrderPageQuery & { relations: OrderRelations }): RawBuilder<OrderWithRelatedRow> {
  const { columns, joins } = orderWithRelated(query.relations)
  const conditions = filterConditions(query, 'orders')
  // Unqualified, as keysetPage writes it: the joined owner's columns are all prefixed.
  if (query.after) conditions.push(afterPosition(query.sort, query.after))
  return sql<OrderWithRelatedRow>`
    select ${columns} from orders ${joins} ${whereAll(conditions)}
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

/** What creating an order reads before it writes (buyerAndPricesOfNewOrder). */
export interface NewOrderFacts {
  buyerExists: boolean
  /** The price of each sku the order names; a sku no product has is absent. */
  prices: Map<string, number>
  /** The new order's id, taken from its sequence (a refused order leaves a gap, as a rolled-back insert does). */
  id: number
  /** The new order's creation time: the transaction's, at the column's millisecond precision. */
  createdAt: Date
}

/**
 * What creating an order needs to know, in one statement, its text written once (the create's hot
 * path builds no query): whether its buyer exists, the price of each sku (duplicates read once),
 * and the id and time the order will have. Knowing those before the insert, the service builds
 * the order, its event and its stored outcome first, and one statement writes them all.
 */
const buyerAndPrices = compiledStatement<{
  buyer_exists: boolean
  prices: Array<{ sku: string; price: number }>
  id: number
  created_at: Date
}>(
  `select exists (select from users where id = $1) as buyer_exists,
  (select coalesce(json_agg(json_build_object('sku', p.sku, 'price', p.price)), '[]'::json)
   from products as p where p.sku = any($2::text[])) as prices,
  nextval(pg_get_serial_sequence('orders', 'id'))::int as id, now()::timestamptz(3) as created_at`,
)

export async function buyerAndPricesOfNewOrder(db: Executor, userId: number, skus: readonly string[]): Promise<NewOrderFacts> {
  const [row] = await buyerAndPrices(db, [userId, [...new Set(skus)]])
  if (!row) throw new Error('the buyer and prices statement returned no row')
  return {
    buyerExists: row.buyer_exists,
    prices: new Map(row.prices.map((product) => [product.sku, product.price])),
    id: row.id,
    createdAt: row.created_at,
  }
}

/**
 * A new order in one statement: the order with the id and time buyerAndPricesOfNewOrder gave it,
 * its items (as three arrays), its event (an eventRecord) and, for a keyed create, its stored
 * outcome (the write scope's outcomeOf); the relays are woken on commit.
 */
export async function insertNewOrder(
  db: Executor,
  order: Pick<OrderRow, 'id' | 'user_id' | 'total' | 'created_at'>,
  items: readonly PricedItem[],
  records: { event: RawBuilder<unknown>; outcome: RawBuilder<unknown> | undefined },
): Promise<void> {
  await sql`
  with inserted as (
    insert into orders (id, user_id, status, total, created_at, updated_at)
    values (${order.id}, ${order.user_id}, 'pending', ${order.total}, ${order.created_at}, ${order.created_at}) returning id
  ), inserted_items as (
    insert into order_items (order_id, position, sku, qty, unit_price)
    select inserted.id, item.ordinality - 1, item.sku, item.qty, item.unit_price
    from inserted, unnest(${items.map((item) => item.sku)}::text[], ${items.map((item) => item.qty)}::int[],
      ${items.map((item) => item.unit_price)}::int[]) with ordinality as item(sku, qty, unit_price, ordinality)
  ), recorded as (${records.event})${records.outcome ? sql`, stored_outcome as (${records.outcome})` : sql``}
  ${wakeRelaysAfter('recorded')}`.execute(db)
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
