/**
 * GraphQL for orders: thin resolvers over the same service the REST routes call. A list of orders
 * (Query.orders, ordersConnection, User.orders) is resolved by plan (orders.plan.ts, where each
 * list field's look-ahead and arguments are decided): a page reads only the fields selected and,
 * when selected, its owners (with their company) in one second statement (decisions §13);
 * User.orders joins each order's owner. Order.user and User.company answer from their parent
 * without a load. Whatever a plan did not read (Item.product, a record reached otherwise) is a
 * loader: one set-based statement per field per execution step, whatever the number of parents.
 */
import type {
  MutationCancelOrderArgs,
  MutationPayOrderArgs,
  MutationRefundOrderArgs,
  Resolvers,
  SubscriptionOrderCreatedArgs,
  SubscriptionOrderStatusChangedArgs,
} from '../../generated/graphql/types.ts'
import type { Loaders } from '../../graphql/resolving/loaders.ts'
import { parseId } from '../../graphql/resolving/arguments.ts'
import { callerOf, subscriber } from '../../graphql/resolving/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/resolving/mutations.ts'
import { orNull } from '../../graphql/resolving/or-null.ts'
import type { MercuriusContext } from 'mercurius'
import type { OrderAction } from './orders.service.ts'
import type { EventType, Order } from '../../contract/contract-types.ts'
import mercurius from 'mercurius'
import { authorize, isOwnerOrAdmin } from '../../auth/policy.ts'
import type { ServiceOperation } from '../../generated/required-scopes.ts'
import { subscriptionError } from '../../graphql/errors.ts'
import { resolvingEvent, subscribeAfter } from '../../graphql/subscriptions/event-replay.ts'
import { toConnection } from '../../graphql/resolving/connection.ts'
import { toGlobalId } from '../../graphql/resolving/global-id.ts'
import { lookupPerSize } from '../../pagination/per-parent.ts'
import { orderListPlan, plannedRecentOrders, userOrdersBatchPlan } from './orders.plan.ts'

/**
 * A field's value as the parent was read: a plan reads only what its selection names (orders.plan.ts,
 * decisions §13), so a value missing under a field that is resolving is a plan that forgot it, a
 * bug that answers an error, never a made-up value.
 */
function read<Value>(value: Value | undefined, field: string): Value {
  if (value === undefined) throw new Error(`${field} was selected but its plan did not read it`)
  return value
}

type OrderEvent = { orderId: number; userId: number; order: Order; eventId?: string }

/**
 * A subscription to an order topic, authorized as `operation` (the scopes its field requires), that
 * delivers only events about orders the subscriber owns, or all for an admin (as Query.order),
 * further narrowed by `matches`.
 */
function subscribeTo<Args extends { after?: string | null }>(
  operation: ServiceOperation,
  topic: EventType,
  matches: (payload: OrderEvent, args: Args) => boolean,
  checkArgs?: (args: Args) => void,
) {
  return mercurius.withFilter(
    (_root: unknown, args: Args, ctx: MercuriusContext) => {
      try {
        authorize(subscriber(ctx), operation)
        checkArgs?.(args)
      } catch (error) {
        throw subscriptionError(error)
      }
      return subscribeAfter(ctx, topic, args.after).catch((error: unknown) => {
        throw subscriptionError(error)
      })
    },
    (payload: OrderEvent, args: Args, ctx: MercuriusContext) => isOwnerOrAdmin(ctx.caller, payload.userId) && matches(payload, args),
  )
}

/** The order as the event recorded it; its related fields resolve through the usual loaders. */
const resolveOrder = resolvingEvent((payload: OrderEvent) => payload.order)
/** The arguments payOrder, cancelOrder and refundOrder share. */
type ActionArgs = MutationPayOrderArgs | MutationCancelOrderArgs | MutationRefundOrderArgs

/** payOrder, cancelOrder and refundOrder: one state transition each. */
const transition = (ctx: MercuriusContext, field: string, action: OrderAction, args: ActionArgs) =>
  payloadOf(
    ctx.app.services.orders.transition(callerOf(ctx), parseId(args.id, 'id', 'Order'), action, args.reason ?? undefined, {
      idempotency: idempotencyClaimOf(ctx, field, args),
    }),
  )

export const orderResolvers: Resolvers = {
  Query: {
    order: (_, args, ctx) => orNull(ctx.app.services.orders.get(callerOf(ctx), parseId(args.id, 'id', 'Order'))),

    orders: async (_, args, ctx, info) => {
      const plan = orderListPlan(args, info, 'list')
      const page = await ctx.app.services.orders.list(callerOf(ctx), plan.query, plan.options)
      const cursors = page.cursors
      return cursors ? page.data.map((order, index) => ({ ...order, cursor: cursors[index]! })) : page.data
    },

    ordersConnection: async (_, args, ctx, info) => {
      const caller = callerOf(ctx)
      const { query, options } = orderListPlan(args, info, 'connection')
      const page = await ctx.app.services.orders.list(caller, query, options)
      // The deprecated Order.cursor still answers with the record's position in this list.
      return toConnection({ ...page, data: page.data.map((order, index) => ({ ...order, cursor: page.cursors![index]! })) }, args.after, {
        total: options.total,
      })
    },
  },

  Mutation: {
    createOrder: (_, args, ctx) =>
      namedAsArguments(
        'input',
        payloadOf(ctx.app.services.orders.create(callerOf(ctx), args.input, { idempotency: idempotencyClaimOf(ctx, 'createOrder', args) })),
      ),

    updateOrder: (_, args, ctx) =>
      namedAsArguments('input', ctx.app.services.orders.replaceItems(callerOf(ctx), parseId(args.id, 'id', 'Order'), args.input.items)),

    payOrder: (_, args, ctx) => namedAsArguments('', transition(ctx, 'payOrder', 'payment', args)),

    cancelOrder: (_, args, ctx) => namedAsArguments('', transition(ctx, 'cancelOrder', 'cancellation', args)),

    refundOrder: (_, args, ctx) => namedAsArguments('', transition(ctx, 'refundOrder', 'refund', args)),

    deleteOrder: async (_, args, ctx) => {
      const id = parseId(args.id, 'id', 'Order')
      await ctx.app.services.orders.remove(callerOf(ctx), id)
      return toGlobalId('Order', id)
    },
  },

  Subscription: {
    orderCreated: {
      subscribe: subscribeTo('orderCreated', 'order.created', (_payload, _args: SubscriptionOrderCreatedArgs) => true),
      resolve: resolveOrder,
    },
    orderStatusChanged: {
      subscribe: subscribeTo(
        'orderStatusChanged',
        'order.status_changed',
        (payload, args: SubscriptionOrderStatusChangedArgs) =>
          args.orderId == null || payload.orderId === parseId(args.orderId, 'orderId', 'Order'),
        // A non-canonical id (`0x10`) is refused like everywhere else, not matched against nothing.
        (args) => void (args.orderId == null || parseId(args.orderId, 'orderId', 'Order')),
      ),
      resolve: resolveOrder,
    },
  },

  Order: {
    createdAt: (order) => read(order.created_at, 'Order.createdAt'),
    updatedAt: (order) => read(order.updated_at, 'Order.updatedAt'),
    // Each line with its order and position, the key of its global id (decisions §13).
    items: (order) => read(order.items, 'Order.items').map((item, position) => ({ ...item, orderId: order.id, position })),
    cursor: (order, _, ctx) =>
      order.cursor ??
      ctx.app.services.orders.defaultCursor(callerOf(ctx), { id: order.id, created_at: read(order.created_at, 'Order.cursor') }),
  },

  Item: {
    unitPrice: (item) => read(item.unit_price, 'Item.unitPrice'),
  },
}

export const orderLoaders: Loaders = {
  Order: {
    /** The owner of each order: the caller could read the order, so may read its owner. */
    user: {
      loader: async (queries, ctx) => {
        const users = await ctx.app.services.users.usersByIds(callerOf(ctx), [...new Set(queries.map((q) => q.obj.user_id))])
        return queries.map(({ obj }) => users.get(obj.user_id) ?? null)
      },
      // Read with the order by its list's plan, as far as the users service lets the caller read it.
      preloaded: (order) => order.related?.user,
    },
  },
  Item: {
    product: async (queries, ctx) => {
      const skus = queries.map(({ obj }) => read(obj.sku, 'Item.product'))
      const products = await ctx.app.services.products.productsBySkus(callerOf(ctx), [...new Set(skus)])
      return skus.map((sku) => products.get(sku) ?? null)
    },
  },
  User: {
    /**
     * `orders(last: N)`: the N most recent orders of each user, oldest first, with their items and
     * the relations selected under them in one statement (a plan, for all the batch's users), one
     * statement per distinct `last`.
     */
    orders: {
      loader: async (queries, ctx) => {
        const caller = callerOf(ctx)
        const { requests, relations } = userOrdersBatchPlan(queries)
        const recentOrders = await lookupPerSize(requests, (ids, last) =>
          ctx.app.services.orders.recentOfUsers(caller, ids, last, relations),
        )
        return requests.map(({ parentId, size }) => recentOrders(parentId, size) ?? [])
      },
      // Read with the user by Query.user's plan (orders.plan.ts).
      preloaded: plannedRecentOrders,
    },
  },
}
