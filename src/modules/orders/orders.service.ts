/**
 * The rules of orders (decisions §2-§5, §11), shared by REST and GraphQL: who may see and change
 * an order, the state machine, pricing from the catalog, and keyset pages. Every change and its
 * outbox event commit in one transaction. Services return API types, never rows.
 */
import type { Caller } from '../../auth/caller.ts'
import type { ServiceOperation } from '../../generated/required-scopes.ts'
import { authorize, isOwnerOrAdmin, permits, requireOwnerOrAdmin } from '../../auth/policy.ts'
import type { OrderItemRow, OrderRow } from '../../db/schema.ts'
import { recordEvent } from '../../db/repositories/outbox.ts'
import type { Executor } from '../../db/executor.ts'
import type { JsonText } from '../../db/json-text.ts'
import { compileStatementWrite, runWrite, type WriteOptions, type Written } from '../../db/write.ts'
import { ApiError, conflict, forbidden, notFound, unprocessable } from '../../errors.ts'
import type { Order, OrderItem, OrderStatus } from '../../contract/contract-types.ts'
import { type CutPage, cutPage, type PageCursors, startOfPage } from '../../pagination/keyset-page.ts'
import type { Page } from '../../pagination/page.ts'
import { groupOldestFirst } from '../../pagination/per-parent.ts'
import type { ServiceDependencies } from '../service-dependencies.ts'
import { findUsersWithRelatedByIds, userExists } from '../users/users.repository.ts'
import { mayReadUser, requireUserReadable, toUserWithRelated, type UserWithRelated } from '../users/users.service.ts'
import type { UserRelations } from '../users/users.repository.ts'
import { MAX_ORDER_TOTAL, type PricingResult, priceItems, type RequestedItem } from './order-pricing.ts'
import * as repository from './orders.repository.ts'

export const ORDER_SORT_FIELDS = ['created_at', 'total', 'id'] as const
export const DEFAULT_ORDER_SORT = '-created_at'

export type OrderAction = 'payment' | 'cancellation' | 'refund'

/** The state machine: which action moves an order from which state to which, as which service operation. */
const TRANSITIONS: Record<OrderAction, { from: OrderStatus; to: OrderStatus; verb: string; operation: ServiceOperation }> = {
  payment: { from: 'pending', to: 'paid', verb: 'pay', operation: 'payOrder' },
  cancellation: { from: 'pending', to: 'cancelled', verb: 'cancel', operation: 'cancelOrder' },
  refund: { from: 'paid', to: 'refunded', verb: 'refund', operation: 'refundOrder' },
}

/** Paid and refunded orders are financial records and are never deleted. */
const DELETABLE: ReadonlySet<OrderStatus> = new Set(['pending', 'cancelled'])

/**
 * An order as REST sends it: its JSON text, built by PostgreSQL, and what its ETag and a cursor
 * are made of (its id, version and sort keys).
 */
export interface OrderText {
  json: JsonText<Order>
  id: number
  total: number
  created_at: string
  updated_at: string
}

/** Called with the current representation before a write: REST checks If-Match with it. */
export type Precondition = (current: Order) => void

/** An order action also takes REST's If-Match. */
export interface OrderWriteOptions extends WriteOptions {
  precondition?: Precondition | undefined
}

/**
 * How a page of orders is read, for REST: each order as its JSON text, the cursors its envelope
 * shows (the next page's), and envelope A's `page.total` when asked (REST's top-level list). Neither
 * a total nor a cursor is computed unless asked: a count is most of PostgreSQL's time per page, and
 * each cursor is an HMAC.
 */
export interface OrderTextPageOptions {
  cursors: PageCursors
  total: boolean
  include?: undefined
}

/**
 * What a GraphQL plan reads of each order of a page: the order's columns its selection names, and
 * its owner (with the owner's relations) when selected, read apart in one statement for the page's
 * owners (decisions §13).
 */
export interface OrderPageInclude {
  columns: repository.OrderColumns
  user?: UserRelations | undefined
}

/**
 * How a page of orders is read by a GraphQL plan: each order as a record with what it `include`s,
 * the cursors the field shows (a list field none but the deprecated Order.cursor, a connection
 * every one), and the total when the connection's `totalCount` is selected.
 */
export interface OrderRecordPageOptions {
  cursors: PageCursors
  include: OrderPageInclude
  total: boolean
}

export interface OrderListQuery {
  status?: OrderStatus | undefined
  userId?: number | undefined
  sort?: string | undefined
  cursor?: string | undefined
  limit: number
}

/**
 * An order as a plan read it: its id and owner's id always, each other field when its selection
 * named it (a page of Query.orders reads no more, decisions §13), an item with the item fields
 * selected. Everywhere else an order is read whole, which this type also is.
 */
export type PlannedOrder = Pick<Order, 'id' | 'user_id'> &
  Partial<Omit<Order, 'id' | 'user_id' | 'items'>> & { items?: Array<Partial<OrderItem>> }

/**
 * An order with the related records a plan read with it (GraphQL): its owner when asked for, as the
 * users service lets the caller read it (null when it may not). Without `related`, nothing was read
 * with it.
 */
export type OrderWithRelated = PlannedOrder & RelatedRecords

/** What a plan read with an order (OrderWithRelated). */
interface RelatedRecords {
  related?: { user?: UserWithRelated | null }
}

export function toOrderItem(row: Pick<OrderItemRow, 'sku' | 'qty' | 'unit_price'>): OrderItem {
  return { sku: row.sku, qty: row.qty, unit_price: row.unit_price }
}

export function toOrder(row: OrderRow, items: ReadonlyArray<Pick<OrderItemRow, 'sku' | 'qty' | 'unit_price'>>): Order {
  return {
    id: row.id,
    status: row.status,
    total: row.total,
    items: items.map(toOrderItem),
    user_id: row.user_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** An order as a statement built it (items and timestamps already in the API's form). */
function orderOfRow(row: repository.OrderWithRelatedRow): Order {
  return {
    id: row.id,
    status: row.status,
    total: row.total,
    items: row.items,
    user_id: row.user_id,
    created_at: row.created,
    updated_at: row.updated,
  }
}

/** An order as read with its relations; the owner only as far as the caller may read it. */
function toOrderWithRelated(
  caller: Caller,
  row: repository.OrderWithRelatedRow,
  relations: repository.OrderRelations,
): Order & RelatedRecords {
  const order: Order & RelatedRecords = orderOfRow(row)
  if (relations.user) {
    const user = toUserWithRelated(row)
    order.related = { user: user && mayReadUser(caller, user.id) ? user : null }
  }
  return order
}

/** An order of a plan's page as its statement read it (only the columns asked for). */
function plannedOrderOfRow(row: repository.OrderColumnsRow): PlannedOrder {
  const order: PlannedOrder = { id: row.id, user_id: row.user_id }
  if (row.status !== undefined) order.status = row.status
  if (row.total !== undefined) order.total = row.total
  if (row.items !== undefined) order.items = row.items
  if (row.created !== undefined) order.created_at = row.created
  if (row.updated !== undefined) order.updated_at = row.updated
  return order
}

/** The columns a plan asked for, with the page's sort key when cursors are made of it. */
function withSortKey(columns: repository.OrderColumns, field: repository.OrderSortField, made: PageCursors): repository.OrderColumns {
  if (made === 'none' || field === 'id') return columns
  return field === 'created_at' ? { ...columns, created: true } : { ...columns, total: true }
}

/** An order's sort key for its cursor: read by its statement whenever cursors are made (withSortKey). */
function sortKeyOfPlanned(order: PlannedOrder | OrderText, field: repository.OrderSortField): string | number {
  const value = order[field]
  if (value === undefined) throw new Error(`the page's statement did not read the sort key ${field}`)
  return value
}

/** A cut page as the service answers it: its records, their cursors when made, and its total. */
function pageOfCut<Listed>(cut: CutPage<Listed>, total: number): Page<Listed> {
  return { data: cut.rows, total, nextCursor: cut.nextCursor, ...(cut.cursors ? { cursors: cut.cursors } : {}) }
}

/** A user read with its recent orders (Query.user's plan, orders.plan.ts): User.orders answers from them. */
export type UserWithRecentOrders = UserWithRelated & { recentOrders: OrderWithRelated[] }

export function createOrdersService({
  db,
  statements,
  cursors,
  commands,
}: Pick<ServiceDependencies, 'db' | 'statements' | 'cursors' | 'commands'>) {
  const findOrderRecord = repository.compileFindOrderRecord(statements)
  const findOrderText = repository.compileFindOrderText(statements)
  const orderLists = repository.compileOrderListStatements(statements)
  /** Whether recentOfUsers gives the caller this user's orders: the one rule for a user's orders in GraphQL. */
  const mayReadOrdersOf = (caller: Caller, userId: number) => permits(caller, 'listUserOrders') && isOwnerOrAdmin(caller, userId)
  /** Rows to API orders, with every order's items fetched in one statement. */
  async function withItems(executor: Executor, rows: readonly OrderRow[]): Promise<Order[]> {
    const items = await repository.findItemsOfOrders(
      executor,
      rows.map((row) => row.id),
    )
    const byOrder = new Map<number, OrderItemRow[]>()
    for (const item of items) {
      const list = byOrder.get(item.order_id)
      if (list) list.push(item)
      else byOrder.set(item.order_id, [item])
    }
    return rows.map((row) => toOrder(row, byOrder.get(row.id) ?? []))
  }

  /** Loads an order the caller may act on, locked for the rest of the transaction when writing. */
  async function loadOwned(executor: Executor, caller: Caller, id: number, lock: boolean): Promise<OrderRow> {
    const row = await repository.findOrder(executor, id, { lock })
    if (!row) throw notFound(`Order ${id}`)
    requireOwnerOrAdmin(caller, row.user_id, 'order')
    return row
  }

  async function priced(executor: Executor, items: readonly RequestedItem[]) {
    const prices = await repository.findProductPrices(
      executor,
      items.map((item) => item.sku),
    )
    return pricedAt(items, prices)
  }

  /** The items priced from the catalogue's `prices`, or the 422 that says why they cannot be. */
  function pricedAt(items: readonly RequestedItem[], prices: ReadonlyMap<string, number>) {
    const result = priceItems(items, prices)
    if (!result.ok) throw pricingRefusal(items, result)
    return result
  }

  /** Why `items` cannot be priced: a sku no product has, or a total too large (422). */
  function pricingRefusal(items: readonly RequestedItem[], refused: Extract<PricingResult, { ok: false }>): ApiError {
    if (refused.reason === 'unknown_sku') {
      return unprocessable(
        'UNKNOWN_SKU',
        `No product has the sku ${refused.skus.map((sku) => `"${sku}"`).join(', ')}.`,
        items.flatMap((item, index) =>
          refused.skus.includes(item.sku)
            ? [{ in: 'body' as const, name: `/items/${index}/sku`, message: `no product has sku "${item.sku}"` }]
            : [],
        ),
      )
    }
    return unprocessable('ORDER_TOTAL_TOO_LARGE', `The order total ${refused.total} exceeds the maximum of ${MAX_ORDER_TOTAL} minor units.`)
  }

  /**
   * A new order, in one statement (repository.newOrderStatement); its refusals are the checks'
   * rules, named here from what the statement read: an unknown buyer, then pricing's (priceItems
   * refuses what the statement's checks refused).
   */
  const createOrder = compileStatementWrite<repository.NewOrder, repository.NewOrderRow, Order>(
    statements,
    {
      ...repository.newOrderStatement,
      refusalOf(row, order) {
        if (!row.buyer_exists) return unprocessable('UNKNOWN_USER', `The token's subject, user ${order.userId}, does not exist.`)
        const pricing = priceItems(order.items, new Map((row.prices ?? []).map((product) => [product.sku, product.price])))
        return pricing.ok ? undefined : pricingRefusal(order.items, pricing)
      },
    },
    'creation',
  )

  /**
   * Where a list request starts, and the filter it runs with: without admin, a caller only ever
   * sees its own orders, whatever the filter says.
   */
  function startOf(caller: Caller, query: OrderListQuery, list: string) {
    const position = startOfPage(
      cursors,
      list,
      query.cursor,
      { sort: query.sort, filter: { status: query.status, user_id: query.userId, caller: caller.subject } },
      { sort: DEFAULT_ORDER_SORT, fields: ORDER_SORT_FIELDS },
    )
    const userId = caller.admin ? ((position.filter.user_id as number | null) ?? undefined) : caller.userId
    return { position, filter: { userId, status: (position.filter.status as OrderStatus | null) ?? undefined } }
  }

  /** `GET /orders` and Query.orders: the orders service's rules for who may list what. */
  function checkList(caller: Caller, query: OrderListQuery): void {
    authorize(caller, 'listOrders')
    if (query.userId !== undefined && !caller.admin) throw forbidden('Only an admin may filter orders by user_id.')
  }

  /**
   * GET /orders, Query.orders and ordersConnection: the caller's orders; an admin sees everyone's
   * and may filter by user. As REST's JSON text, or as records with what a plan includes (page).
   */
  function list(caller: Caller, query: OrderListQuery, options: OrderTextPageOptions): Promise<Page<OrderText>>
  function list(caller: Caller, query: OrderListQuery, options: OrderRecordPageOptions): Promise<Page<OrderWithRelated>>
  async function list(
    caller: Caller,
    query: OrderListQuery,
    options: OrderTextPageOptions | OrderRecordPageOptions,
  ): Promise<Page<OrderText> | Page<OrderWithRelated>> {
    checkList(caller, query)
    return page(caller, query, 'orders', options)
  }

  /**
   * One keyset page of the list named `listName`, in one statement: each order as REST's JSON text
   * (with the total when asked), or, with `include`, as a record with those relations (a GraphQL
   * plan). Either way it starts, is cut and makes its cursors the same way, here.
   */
  function page(caller: Caller, query: OrderListQuery, listName: string, options: OrderTextPageOptions): Promise<Page<OrderText>>
  function page(caller: Caller, query: OrderListQuery, listName: string, options: OrderRecordPageOptions): Promise<Page<OrderWithRelated>>
  function page(
    caller: Caller,
    query: OrderListQuery,
    listName: string,
    options: OrderTextPageOptions | OrderRecordPageOptions,
  ): Promise<Page<OrderText> | Page<OrderWithRelated>>
  async function page(
    caller: Caller,
    query: OrderListQuery,
    listName: string,
    options: OrderTextPageOptions | OrderRecordPageOptions,
  ): Promise<Page<OrderText> | Page<OrderWithRelated>> {
    const { position, filter } = startOf(caller, query, listName)
    const at = { ...filter, sort: position.sortBy, after: position.after, limit: query.limit }
    const cut = <Listed extends OrderText | OrderWithRelated>(orders: readonly Listed[]) =>
      cutPage(
        orders,
        query.limit,
        (order) =>
          cursors.encode({
            list: listName,
            sort: position.sort,
            filter: position.filter,
            key: [sortKeyOfPlanned(order, position.sortBy.field), order.id],
          }),
        options.cursors,
      )
    // The total, when asked, is read in the page's own statement (decisions §17); a list that shows
    // none (envelope B, a plan's list field) carries the page's length, as elsewhere.
    const include = options.include
    if (include) {
      const columns = withSortKey(include.columns, position.sortBy.field, options.cursors)
      const { rows, total } = await orderLists.findOrderPageOfColumns(db, at, columns, { withTotal: options.total })
      const cutRecords = cut(rows.map(plannedOrderOfRow))
      if (include.user) await readOwners(caller, cutRecords.rows, include.user)
      return pageOfCut(cutRecords, total ?? cutRecords.rows.length)
    }
    const { rows, total } = await orderLists.findOrderPageAsText(db, at, { withTotal: options.total })
    const cutText = cut(rows)
    return pageOfCut(cutText, total ?? cutText.rows.length)
  }

  /**
   * The owners of a page's orders (`related.user`), with `relations`, in one statement for the
   * page's distinct owners the caller may read (`where id = any($1)`): PostgreSQL paid more for
   * joining them to the page than for this second statement (decisions §13, bench/analysis.md).
   * An owner the caller may not read is null, as when the page joined it.
   */
  async function readOwners(caller: Caller, orders: readonly OrderWithRelated[], relations: UserRelations): Promise<void> {
    const ids = [...new Set(orders.map((order) => order.user_id))].filter((id) => mayReadUser(caller, id))
    const rows = await findUsersWithRelatedByIds(db, ids, relations)
    const owners = new Map(rows.flatMap((row) => toUserWithRelated(row) ?? []).map((user) => [user.id, user]))
    for (const order of orders) order.related = { user: owners.get(order.user_id) ?? null }
  }

  return {
    withItems,

    async get(caller: Caller, id: number): Promise<Order> {
      authorize(caller, 'getOrder')
      // The order and its items in one statement, compiled once.
      const row = await findOrderRecord(db, id)
      if (!row) throw notFound(`Order ${id}`)
      requireOwnerOrAdmin(caller, row.user_id, 'order')
      return orderOfRow(row)
    },

    /** `get` as REST sends it: the same rules, the order as JSON text PostgreSQL built. */
    async getText(caller: Caller, id: number): Promise<OrderText> {
      authorize(caller, 'getOrder')
      const row = await findOrderText(db, id)
      if (!row) throw notFound(`Order ${id}`)
      requireOwnerOrAdmin(caller, row.user_id, 'order')
      return row
    },

    /**
     * `get` for many ids in one statement (GraphQL's `nodes`): each id answers what `get` answers,
     * the order or its error (403 for a missing scope or another user's order); a missing order is
     * absent from the map.
     */
    async getMany(caller: Caller, ids: readonly number[]): Promise<Map<number, Order | ApiError>> {
      try {
        authorize(caller, 'getOrder')
      } catch (error) {
        if (error instanceof ApiError) return new Map(ids.map((id) => [id, error]))
        throw error
      }
      const rows = await repository.findOrderRecordsByIds(db, ids)
      return new Map(
        rows.map((row) => [
          row.id,
          isOwnerOrAdmin(caller, row.user_id) ? orderOfRow(row) : forbidden("You may not access another user's order."),
        ]),
      )
    },

    list,

    /** GET /users/{id}/orders: that user or an admin. */
    async listOfUser(
      caller: Caller,
      userId: number,
      query: Omit<OrderListQuery, 'userId'>,
      options: OrderTextPageOptions,
    ): Promise<Page<OrderText>> {
      authorize(caller, 'listUserOrders')
      requireOwnerOrAdmin(caller, userId, 'orders')
      if (!(await userExists(db, userId))) throw notFound(`User ${userId}`)
      return page(caller, { ...query, userId }, `users/${userId}/orders`, options)
    },

    async create(caller: Caller, input: { items: readonly RequestedItem[] }, options: WriteOptions = {}): Promise<Written<Order>> {
      commands.check('OrderCreate', input)
      authorize(caller, 'createOrder')
      // One statement: the key's claim, the checks, the order with its items, its event and a keyed create's outcome.
      return createOrder(options.idempotency, { userId: caller.userId, items: input.items })
    },

    /** PUT and PATCH: an order's items can change while it is pending, and only then. */
    async replaceItems(
      caller: Caller,
      id: number,
      items: readonly RequestedItem[] | undefined,
      precondition?: Precondition,
    ): Promise<Order> {
      commands.check('OrderItemsReplace', { items })
      authorize(caller, 'updateOrder')
      const { value } = await runWrite(db, undefined, {
        async check(trx) {
          const row = await loadOwned(trx, caller, id, true)
          const [current] = await withItems(trx, [row])
          precondition?.(current!)
          if (row.status !== 'pending') {
            throw conflict('ORDER_NOT_PENDING', `Order ${id} is ${row.status}; only a pending order can be changed.`)
          }
          return { current: current!, pricing: items === undefined ? undefined : await priced(trx, items) }
        },
        async write({ trx }, { current, pricing }) {
          if (pricing === undefined) return current
          const stored = await repository.replaceOrderItems(trx, id, pricing.items)
          const updated = await repository.updateOrder(trx, id, { total: pricing.total })
          return toOrder(updated, stored)
        },
      })
      return value
    },

    async transition(
      caller: Caller,
      id: number,
      action: OrderAction,
      reason: string | undefined,
      options: OrderWriteOptions = {},
    ): Promise<Written<Order>> {
      commands.check('OrderAction', { reason })
      const { from, to, verb, operation } = TRANSITIONS[action]
      authorize(caller, operation)
      return runWrite(db, options.idempotency, {
        async check(trx) {
          const row = await loadOwned(trx, caller, id, true)
          const [current] = await withItems(trx, [row])
          options.precondition?.(current!)
          if (row.status !== from) {
            throw conflict('ORDER_STATE_CONFLICT', `Cannot ${verb} order ${id}: its status is ${row.status} (it must be ${from}).`)
          }
          return { row, current: current! }
        },
        async write({ trx, outcomeOf }, { row, current }) {
          const updated = await repository.updateOrder(trx, id, { status: to })
          const order = { ...current, status: updated.status, updated_at: updated.updated_at.toISOString() }
          // The event and a keyed action's outcome in one statement.
          await recordEvent(
            trx,
            'order.status_changed',
            {
              orderId: id,
              userId: row.user_id,
              from,
              to,
              ...(reason ? { reason } : {}),
              order,
            },
            row.user_id,
            outcomeOf(order),
          )
          return order
        },
      })
    },

    async remove(caller: Caller, id: number, precondition?: Precondition): Promise<void> {
      authorize(caller, 'deleteOrder')
      await runWrite(db, undefined, {
        async check(trx) {
          const row = await loadOwned(trx, caller, id, true)
          const [current] = await withItems(trx, [row])
          precondition?.(current!)
          if (!DELETABLE.has(row.status)) {
            throw conflict(
              'ORDER_NOT_DELETABLE',
              `Order ${id} is ${row.status}: paid and refunded orders are financial records and cannot be deleted.`,
            )
          }
        },
        async write({ trx }) {
          await repository.deleteOrder(trx, id)
        },
      })
    },

    /** The cursor an order has in the caller's default list (newest first, unfiltered). */
    defaultCursor(caller: Caller, order: Pick<Order, 'id' | 'created_at'>): string {
      return cursors.encode({
        list: 'orders',
        sort: DEFAULT_ORDER_SORT,
        filter: { status: null, user_id: null, caller: caller.subject },
        key: [order.created_at, order.id],
      })
    },

    /**
     * The `last` most recent orders of each user, oldest of them first, with their items and the
     * relations asked for: one statement for any number of users. A user whose orders the caller
     * may not read gets a 403 error in place of its list (GraphQL's User.orders reports it on that
     * field alone).
     */
    async recentOfUsers(
      caller: Caller,
      userIds: readonly number[],
      last: number,
      relations: repository.OrderRelations = {},
    ): Promise<Map<number, OrderWithRelated[] | ApiError>> {
      authorize(caller, 'listUserOrders')
      const readable = userIds.filter((id) => mayReadOrdersOf(caller, id))
      const rows = await orderLists.findRecentOrdersOfUsers(db, readable, last, relations)
      const orders = rows.map((row) => toOrderWithRelated(caller, row, relations))
      const byUser = new Map<number, OrderWithRelated[] | ApiError>(groupOldestFirst(readable, orders, (order) => order.user_id))
      for (const id of userIds) if (!byUser.has(id)) byUser.set(id, forbidden("You may not access another user's orders."))
      return byUser
    },

    /**
     * Query.user with its `last` most recent orders in the same statement (a plan): the user as
     * users.get answers it, and the orders recentOfUsers would answer for it, oldest first. When
     * the caller may not read that user's orders, none are carried: User.orders loads, and
     * refuses, as it does without the plan.
     */
    async getUserWithRecentOrders(
      caller: Caller,
      userId: number,
      userRelations: UserRelations,
      last: number,
    ): Promise<UserWithRelated | UserWithRecentOrders> {
      requireUserReadable(caller, userId)
      const row = await orderLists.findUserWithRecentOrders(db, userId, userRelations, last)
      const user = row && toUserWithRelated(row)
      if (!row || !user) throw notFound(`User ${userId}`)
      // Read in any case (one statement either way), dropped here when they may not be shown.
      if (!mayReadOrdersOf(caller, userId)) return user
      return { ...user, recentOrders: row.recent_orders.map((order) => toOrderWithRelated(caller, order, {})) }
    },

    /** GET /orders/{id}/items: an order has at most 100 items; pages keep them in stored order. */
    async listItems(caller: Caller, id: number, query: { cursor?: string | undefined; limit: number }): Promise<Page<OrderItem>> {
      const order = await this.get(caller, id)
      const list = `orders/${id}/items`
      const start = query.cursor === undefined ? 0 : Number(cursors.decode(query.cursor, list).key[1])
      const data = order.items.slice(start, start + query.limit)
      const next = start + query.limit
      return {
        data,
        total: order.items.length,
        nextCursor: next < order.items.length ? cursors.encode({ list, sort: 'position', filter: {}, key: [next, next] }) : null,
      }
    },
  }
}

export type OrdersService = ReturnType<typeof createOrdersService>
