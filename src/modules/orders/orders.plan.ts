/**
 * The look-ahead of every orders field, in one place: Query.orders and ordersConnection (a page of
 * orders), User.orders (the recent orders of each user) and Query.user's statement, which reads a
 * user's recent orders with the user when it can. Each plan says what the selection under the field
 * needs read with each order (a page: only the columns and item fields selected, and the owners
 * apart; User.orders: every field, its owner and the owner's company joined when selected),
 * what a parent already carries, and the field's arguments as the orders service reads them, each
 * argument parsed here and only here. The resolvers (orders.resolvers.ts, and users.resolvers.ts for
 * Query.user and me) only carry the plans out.
 */
import type { FieldNode, GraphQLResolveInfo } from 'graphql'
import { getArgumentValues, isObjectType } from 'graphql'
import type { QueryOrdersArgs, UserOrdersArgs } from '../../generated/graphql/types.ts'
import { pageOf, parseCount, parseId } from '../../graphql/resolving/arguments.ts'
import {
  type SelectedFields,
  type SelectionContext,
  selectedFields,
  selectedFieldsAt,
  selectedFieldsOf,
} from '../../graphql/resolving/selects-field.ts'
import type { UserParent } from '../graphql-parents.ts'
import { selectsTotalCount } from '../../graphql/resolving/connection.ts'
import { userRelationsOf } from '../users/users.plan.ts'
import type { ItemColumns, OrderColumns, OrderRelations } from './orders.repository.ts'
import type { OrderListQuery, OrderPageInclude, OrderRecordPageOptions, OrderWithRelated, UserWithRecentOrders } from './orders.service.ts'

/** What the Order fields selected (`fields`) need read with each order: its owner, with what is selected under it. */
function orderRelationsOf(fields: SelectedFields, context: SelectionContext): OrderRelations {
  const user = fields.get('user')
  return user ? { user: userRelationsOf(selectedFieldsOf(user, context)) } : {}
}

/**
 * The item fields an Item selection (`fields`) needs read: each scalar its own column, Item.product
 * the sku it is found by. Item.id is made of the order and the position, read anyway.
 */
function itemColumnsOf(fields: SelectedFields): ItemColumns {
  return { sku: fields.has('sku') || fields.has('product'), qty: fields.has('qty'), unit_price: fields.has('unitPrice') }
}

/**
 * What a page of orders reads of each order for the Order fields selected (`fields`): only the
 * columns those fields need (id, databaseId and user need the id and owner's id, always read), the
 * items with only the item fields selected, and the owner, read apart (decisions §13). The page's
 * sort key is added by the service when it makes cursors.
 */
function orderPageIncludeOf(fields: SelectedFields, context: SelectionContext): OrderPageInclude {
  const items = fields.get('items')
  const columns: OrderColumns = {
    status: fields.has('status'),
    total: fields.has('total'),
    // The deprecated Order.cursor of an order whose list made none is made of its creation time.
    created: fields.has('createdAt') || fields.has('cursor'),
    updated: fields.has('updatedAt'),
    items: items ? itemColumnsOf(selectedFieldsOf(items, context)) : undefined,
  }
  return { columns, ...orderRelationsOf(fields, context) }
}

/** A page of orders as a plan reads it: the service's list query, and what the page is read with. */
export interface OrderListPlan {
  query: OrderListQuery
  options: OrderRecordPageOptions
}

/**
 * Query.orders (`list`) and ordersConnection (`connection`): their arguments (the same for both)
 * as the service's list query, and the page's options: the relations the orders' selection needs,
 * and the cursors shown. A connection shows every record's on its edges; a list field none but the
 * deprecated Order.cursor, each an HMAC, so made only when selected. A connection reads its total
 * in the page's statement when its `totalCount` is selected.
 */
export function orderListPlan(args: QueryOrdersArgs, info: GraphQLResolveInfo, field: 'list' | 'connection'): OrderListPlan {
  const fields = field === 'connection' ? selectedFieldsAt(info, ['edges', 'node']) : selectedFields(info)
  return {
    query: {
      status: args.status ?? undefined,
      userId: args.userId == null ? undefined : parseId(args.userId, 'userId', 'User'),
      ...pageOf(args),
    },
    options: {
      cursors: field === 'connection' || fields.has('cursor') ? 'every' : 'none',
      include: orderPageIncludeOf(fields, info),
      total: field === 'connection' && selectsTotalCount(info),
    },
  }
}

/** User.orders' `last` as the service reads it: the page size rule, its default when omitted. */
function lastOf(args: UserOrdersArgs): number {
  return parseCount(args.last, 'last')
}

/**
 * Query.user's and Query.me's plan for User.orders: the `last` of the user's orders when the user's
 * own statement can read them too (orders.service.ts getUserWithRecentOrders), else undefined. It
 * can for one `orders` field (a second alias or a repetition loads as usual, one statement per
 * `last`), with a valid `last`, selecting no owner under its orders (that is User.orders' own
 * plan). An invalid `last` plans nothing: User.orders refuses it where it always did.
 */
export function userOrdersReadWithUser(userFields: SelectedFields, info: GraphQLResolveInfo): number | undefined {
  const nodes = userFields.get('orders')
  const node = nodes?.length === 1 ? nodes[0] : undefined
  if (!node || selectedFieldsOf([node], info).has('user')) return undefined
  const userType = info.schema.getType('User')
  const field = isObjectType(userType) ? userType.getFields().orders : undefined
  if (!field) return undefined
  try {
    // The arguments as graphql-js coerces them for the field's own resolver, variables included.
    const { last } = getArgumentValues(field, node, info.variableValues)
    return lastOf({ last: typeof last === 'number' ? last : undefined })
  } catch {
    return undefined
  }
}

/**
 * The orders a user read by Query.user's plan carries: undefined for any other user (User.orders
 * then loads). The plan reads them only for a user whose selection has this one `orders` field
 * (userOrdersReadWithUser), so they answer this field's `last` without parsing it again.
 */
export function plannedRecentOrders(user: UserParent): OrderWithRelated[] | undefined {
  return carriesRecentOrders(user) ? user.recentOrders : undefined
}

/** Whether a user was read with its recent orders (getUserWithRecentOrders). */
function carriesRecentOrders(user: UserParent): user is UserParent & UserWithRecentOrders {
  return 'recentOrders' in user
}

/**
 * A batch of User.orders loads (the parents of one execution step): each user's id with its
 * `last`, and the relations read with every order of the batch: every load's selection together
 * (aliases of the field may select differently; reading more for one of them costs nothing in
 * statements).
 */
export function userOrdersBatchPlan(
  queries: ReadonlyArray<{ obj: UserParent; params: UserOrdersArgs; info: SelectionContext & { fieldNodes: readonly FieldNode[] } }>,
): { requests: Array<{ parentId: number; size: number }>; relations: OrderRelations } {
  const seen = new Set<readonly FieldNode[]>()
  let user: OrderRelations['user']
  for (const { info } of queries) {
    // The loads of one field's parents share its nodes: each selection is read once.
    if (seen.has(info.fieldNodes)) continue
    seen.add(info.fieldNodes)
    const relations = orderRelationsOf(selectedFieldsOf(info.fieldNodes, info), info)
    if (relations.user) user = { company: Boolean(user?.company || relations.user.company) }
  }
  return {
    requests: queries.map(({ obj, params }) => ({ parentId: obj.id, size: lastOf(params) })),
    relations: user ? { user } : {},
  }
}
