/**
 * GraphQL for orders: thin resolvers over the same service the REST routes call. Fields that
 * reach related records (Order.user, Item.product, User.orders) are loaders: one set-based
 * statement per field per execution step, whatever the number of parents.
 */
import type {
  MutationCancelOrderArgs,
  MutationPayOrderArgs,
  MutationRefundOrderArgs,
  Resolvers,
  SubscriptionOrderStatusChangedArgs,
} from '../../generated/graphql/types.ts'
import type { Loaders } from '../../graphql/loaders.ts'
import { pageOf, parseCount, parseId } from '../../graphql/arguments.ts'
import { callerOf, subscriber } from '../../graphql/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/mutations.ts'
import { orNull } from '../../graphql/or-null.ts'
import type { MercuriusContext } from 'mercurius'
import type { OrderAction } from './orders.service.ts'
import type { Order } from '../../contract-types.ts'
import mercurius from 'mercurius'
import { isOwnerOrAdmin, requireScope } from '../../auth/policy.ts'
import { subscriptionError } from '../../graphql/errors.ts'
import { subscribeBounded } from '../../graphql/pubsub.ts'
import { toConnection } from '../../graphql/connection.ts'
import { selectsField } from '../../graphql/selects-field.ts'
import { lookupPerSize } from '../../pagination/per-parent.ts'

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
/** The arguments payOrder, cancelOrder and refundOrder share. */
type ActionArgs = MutationPayOrderArgs | MutationCancelOrderArgs | MutationRefundOrderArgs

/** payOrder, cancelOrder and refundOrder: one state transition each. */
const transition = (ctx: MercuriusContext, field: string, action: OrderAction, args: ActionArgs) =>
  payloadOf(
    ctx.app.services.orders.transition(callerOf(ctx), parseId(args.id, 'id'), action, args.reason ?? undefined, {
      idempotency: idempotencyClaimOf(ctx, field, args),
    }),
  )

export const orderResolvers: Resolvers = {
  Query: {
    order: (_, args, ctx) => orNull(ctx.app.services.orders.get(callerOf(ctx), parseId(args.id, 'id'))),

    orders: async (_, args, ctx, info) => {
      // No total in a plain list; each record's (deprecated) cursor is an HMAC, made only when selected.
      const everyCursor = selectsField(info, 'cursor')
      const page = await ctx.app.services.orders.list(
        callerOf(ctx),
        {
          status: args.status ?? undefined,
          userId: args.userId == null ? undefined : parseId(args.userId, 'userId'),
          ...pageOf(args),
        },
        { total: false, everyCursor },
      )
      const cursors = page.cursors
      return cursors ? page.data.map((order, index) => ({ ...order, cursor: cursors[index]! })) : page.data
    },

    ordersConnection: async (_, args, ctx) => {
      // A connection has no totalCount: no count.
      const page = await ctx.app.services.orders.list(
        callerOf(ctx),
        {
          status: args.status ?? undefined,
          userId: args.userId == null ? undefined : parseId(args.userId, 'userId'),
          ...pageOf(args),
        },
        { total: false, everyCursor: true },
      )
      // The deprecated Order.cursor still answers with the record's position in this list.
      return toConnection({ ...page, data: page.data.map((order, index) => ({ ...order, cursor: page.cursors![index]! })) }, args.after)
    },
  },

  Mutation: {
    createOrder: (_, args, ctx) =>
      namedAsArguments(
        'input',
        payloadOf(ctx.app.services.orders.create(callerOf(ctx), args.input, { idempotency: idempotencyClaimOf(ctx, 'createOrder', args) })),
      ),

    updateOrder: (_, args, ctx) =>
      namedAsArguments('input', ctx.app.services.orders.replaceItems(callerOf(ctx), parseId(args.id, 'id'), args.input.items)),

    payOrder: (_, args, ctx) => namedAsArguments('', transition(ctx, 'payOrder', 'payment', args)),

    cancelOrder: (_, args, ctx) => namedAsArguments('', transition(ctx, 'cancelOrder', 'cancellation', args)),

    refundOrder: (_, args, ctx) => namedAsArguments('', transition(ctx, 'refundOrder', 'refund', args)),

    deleteOrder: async (_, args, ctx) => {
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
        (payload, args: SubscriptionOrderStatusChangedArgs) => args.orderId == null || String(payload.orderId) === String(args.orderId),
        // A non-canonical id (`0x10`) is refused like everywhere else, not matched against nothing.
        (args) => void (args.orderId == null || parseId(args.orderId, 'orderId')),
      ),
      resolve: resolveOrder,
    },
  },

  Order: {
    createdAt: (order) => order.created_at,
    updatedAt: (order) => order.updated_at,
    cursor: (order, _, ctx) => order.cursor ?? ctx.app.services.orders.defaultCursor(callerOf(ctx), order),
  },

  Item: {
    unitPrice: (item) => item.unit_price,
  },
}

export const orderLoaders: Loaders = {
  Order: {
    /** The owner of each order: the caller could read the order, so may read its owner. */
    user: async (queries, ctx) => {
      const users = await ctx.app.services.users.usersByIds(callerOf(ctx), [...new Set(queries.map((q) => q.obj.user_id))])
      return queries.map(({ obj }) => users.get(obj.user_id) ?? null)
    },
  },
  Item: {
    product: async (queries, ctx) => {
      const products = await ctx.app.services.products.productsBySkus(callerOf(ctx), [...new Set(queries.map((q) => q.obj.sku))])
      return queries.map(({ obj }) => products.get(obj.sku) ?? null)
    },
  },
  User: {
    /** `orders(last: N)`: the N most recent orders of each user, oldest first, with their items in one statement. */
    orders: async (queries, ctx) => {
      const caller = callerOf(ctx)
      const requests = queries.map(({ obj, params }) => ({ parentId: obj.id, size: parseCount(params.last, 'last') }))
      const recentOrders = await lookupPerSize(requests, (ids, last) => ctx.app.services.orders.recentOfUsers(caller, ids, last))
      return requests.map(({ parentId, size }) => recentOrders(parentId, size) ?? [])
    },
  },
}
