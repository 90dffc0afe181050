/**
 * GraphQL for orders: thin resolvers over the same service the REST routes call. Fields that
 * reach related records (Order.user, Item.product, User.orders) are loaders: one set-based
 * statement per field per execution step, whatever the number of parents.
 */
import type { MercuriusContext } from 'mercurius'
import { callerOf, idempotencyClaimOf, namedAsArguments, orNull, parseCount, parseId, payloadOf } from '../../graphql/arguments.ts'
import type { OrderStatus } from '../../generated/graphql/types.ts'
import type { OrderAction } from './orders.service.ts'
import type { Order, OrderItem, User } from '../../contract-types.ts'
import mercurius from 'mercurius'
import { isOwnerOrAdmin, requireScope } from '../../auth/policy.ts'
import { lookupPerSize } from '../../pagination/per-parent.ts'
import { subscriber } from '../../graphql/arguments.ts'
import { subscriptionError } from '../../graphql/errors.ts'
import { subscribeBounded } from '../../graphql/pubsub.ts'
import { toConnection, type Connection } from '../../graphql/connection.ts'

type OrderWithCursor = Order & { cursor?: string }
type OrderEvent = { orderId: number; userId: number; order: Order }

/**
 * A subscription to an order topic that delivers only events about orders the subscriber may read
 * (the same policy as Query.order), further narrowed by `matches`.
 */
function subscribeTo<Args>(topic: string, matches: (payload: OrderEvent, args: Args) => boolean, checkArgs?: (args: Args) => void) {
  return mercurius.withFilter(
    (_root: unknown, args: Args, ctx: MercuriusContext) => {
      try {
        requireScope(subscriber(ctx), 'orders:read')
        checkArgs?.(args)
      } catch (error) {
        throw subscriptionError(error)
      }
      return subscribeBounded(ctx, topic)
    },
    (payload: OrderEvent, args: Args, ctx: MercuriusContext) => isOwnerOrAdmin(ctx.caller, payload.userId) && matches(payload, args),
  )
}

/** The order as the event recorded it; its related fields resolve through the usual loaders. */
const resolveOrder = (payload: OrderEvent) => payload.order
type ItemInput = { items: Array<{ sku: string; qty: number }> }
type ActionArgs = { id: string; reason?: string | null; idempotencyKey?: string | null }

/** payOrder, cancelOrder and refundOrder: one state transition each. */
const transition = (ctx: MercuriusContext, field: string, action: OrderAction, args: ActionArgs) =>
  payloadOf(
    ctx.app.services.orders.transition(callerOf(ctx), parseId(args.id, 'id'), action, args.reason ?? undefined, {
      idempotency: idempotencyClaimOf(ctx, field, args),
    }),
  )

export const orderResolvers = {
  Query: {
    order: (_: unknown, args: { id: string }, ctx: MercuriusContext) =>
      orNull(ctx.app.services.orders.get(callerOf(ctx), parseId(args.id, 'id'))),

    orders: async (
      _: unknown,
      args: { status?: OrderStatus | null; userId?: string | null; first?: number | null; after?: string | null },
      ctx: MercuriusContext,
    ): Promise<OrderWithCursor[]> => {
      const page = await ctx.app.services.orders.list(callerOf(ctx), {
        status: args.status ?? undefined,
        userId: args.userId == null ? undefined : parseId(args.userId, 'userId'),
        cursor: args.after ?? undefined,
        limit: parseCount(args.first, 'first'),
      })
      return page.data.map((order, index) => ({ ...order, cursor: page.cursors![index]! }))
    },

    ordersConnection: async (
      _: unknown,
      args: { status?: OrderStatus | null; userId?: string | null; first?: number | null; after?: string | null },
      ctx: MercuriusContext,
    ): Promise<Connection<OrderWithCursor>> => {
      const page = await ctx.app.services.orders.list(callerOf(ctx), {
        status: args.status ?? undefined,
        userId: args.userId == null ? undefined : parseId(args.userId, 'userId'),
        cursor: args.after ?? undefined,
        limit: parseCount(args.first, 'first'),
      })
      // The deprecated Order.cursor still answers with the record's position in this list.
      return toConnection({ ...page, data: page.data.map((order, index) => ({ ...order, cursor: page.cursors![index]! })) }, args.after)
    },
  },

  Mutation: {
    createOrder: (_: unknown, args: { input: ItemInput; idempotencyKey?: string | null }, ctx: MercuriusContext) =>
      namedAsArguments(
        'input',
        payloadOf(ctx.app.services.orders.create(callerOf(ctx), args.input, { idempotency: idempotencyClaimOf(ctx, 'createOrder', args) })),
      ),

    updateOrder: (_: unknown, args: { id: string; input: ItemInput }, ctx: MercuriusContext) =>
      namedAsArguments('input', ctx.app.services.orders.replaceItems(callerOf(ctx), parseId(args.id, 'id'), args.input.items)),

    payOrder: (_: unknown, args: ActionArgs, ctx: MercuriusContext) => namedAsArguments('', transition(ctx, 'payOrder', 'payment', args)),

    cancelOrder: (_: unknown, args: ActionArgs, ctx: MercuriusContext) =>
      namedAsArguments('', transition(ctx, 'cancelOrder', 'cancellation', args)),

    refundOrder: (_: unknown, args: ActionArgs, ctx: MercuriusContext) =>
      namedAsArguments('', transition(ctx, 'refundOrder', 'refund', args)),

    deleteOrder: async (_: unknown, args: { id: string }, ctx: MercuriusContext) => {
      const id = parseId(args.id, 'id')
      await ctx.app.services.orders.remove(callerOf(ctx), id)
      return String(id)
    },
  },

  Subscription: {
    orderCreated: {
      subscribe: subscribeTo('order.created', () => true),
      resolve: resolveOrder,
    },
    orderStatusChanged: {
      subscribe: subscribeTo(
        'order.status_changed',
        (payload, args: { orderId?: string | null }) => args.orderId == null || String(payload.orderId) === String(args.orderId),
        // A non-canonical id (`0x10`) is refused like everywhere else, not matched against nothing.
        (args) => void (args.orderId == null || parseId(args.orderId, 'orderId')),
      ),
      resolve: resolveOrder,
    },
  },

  Order: {
    createdAt: (order: Order) => order.created_at,
    updatedAt: (order: Order) => order.updated_at,
    cursor: (order: OrderWithCursor, _: unknown, ctx: MercuriusContext) =>
      order.cursor ?? ctx.app.services.orders.defaultCursor(callerOf(ctx), order),
  },

  Item: {
    unitPrice: (item: OrderItem) => item.unit_price,
  },
}

export const orderLoaders = {
  Order: {
    /** The owner of each order: the caller could read the order, so the service lets it read its owner. */
    user: async (queries: Array<{ obj: Order }>, ctx: MercuriusContext) => {
      const users = await ctx.app.services.users.usersByIds(callerOf(ctx), [...new Set(queries.map((q) => q.obj.user_id))])
      return queries.map(({ obj }) => users.get(obj.user_id) ?? null)
    },
  },
  Item: {
    product: async (queries: Array<{ obj: OrderItem }>, ctx: MercuriusContext) => {
      const products = await ctx.app.services.products.productsBySkus(callerOf(ctx), [...new Set(queries.map((q) => q.obj.sku))])
      return queries.map(({ obj }) => products.get(obj.sku) ?? null)
    },
  },
  User: {
    /** `orders(last: N)`: the N most recent orders of each user, oldest first, in two statements. */
    orders: async (queries: Array<{ obj: User; params: { last?: number | null } }>, ctx: MercuriusContext) => {
      const caller = callerOf(ctx)
      const requests = queries.map(({ obj, params }) => ({ parentId: obj.id, size: parseCount(params.last, 'last') }))
      const recentOrders = await lookupPerSize(requests, (ids, last) => ctx.app.services.orders.recentOfUsers(caller, ids, last))
      return requests.map(({ parentId, size }) => recentOrders(parentId, size) ?? [])
    },
  },
}
