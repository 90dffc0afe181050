/** REST handlers for orders, by operationId: parse, call the service, shape the answer. */
import type { AppConfig } from '../../config.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { answerWrite, baseUrl, caller, ifMatch, sendCollection, sendNestedCollection, sendRecord } from '../../http/rest.ts'
import type { OrderStatus } from '../../db/schema.ts'
import type { Order } from '../../contract-types.ts'
import type { OrderAction, OrdersService } from './orders.service.ts'

interface ListQuery {
  status?: OrderStatus
  user_id?: number
  sort?: string
  cursor?: string
  limit: number
  fields?: string
}

type IdParams = { id: number }
type ItemsBody = { items?: Array<{ sku: string; qty: number }> }

export function orderHandlers(orders: OrdersService, config: AppConfig): OperationHandlers {
  const location = (request: Parameters<typeof baseUrl>[0], id: number) => `${baseUrl(request, config.publicUrl)}/api/v1/orders/${id}`

  const action =
    (kind: OrderAction): OperationHandlers['payOrder'] =>
    async (request, reply) => {
      const { id } = request.params as IdParams
      const reason = (request.body as { reason?: string } | undefined)?.reason
      return answerWrite<Order>(
        request,
        reply,
        (idempotency) => orders.transition(caller(request), id, kind, reason, { idempotency, precondition: ifMatch(request) }),
        { status: 200 },
      )
    }

  return {
    listOrders: async (request, reply) => {
      const query = request.query as ListQuery
      const page = await orders.list(caller(request), {
        status: query.status,
        userId: query.user_id,
        sort: query.sort,
        cursor: query.cursor,
        limit: query.limit,
      })
      return sendCollection(request, reply, config.publicUrl, page, query.fields)
    },

    createOrder: async (request, reply) => {
      const body = request.body as Required<ItemsBody>
      return answerWrite<Order>(request, reply, (idempotency) => orders.create(caller(request), { items: body.items }, { idempotency }), {
        status: 201,
        location: (order) => location(request, order.id),
      })
    },

    getOrder: async (request, reply) => {
      const { id } = request.params as IdParams
      const order = await orders.get(caller(request), id)
      return sendRecord(reply, order, (request.query as { fields?: string }).fields)
    },

    replaceOrder: async (request, reply) => {
      const { id } = request.params as IdParams
      const order = await orders.replaceItems(caller(request), id, (request.body as Required<ItemsBody>).items, ifMatch(request))
      return sendRecord(reply, order)
    },

    updateOrder: async (request, reply) => {
      const { id } = request.params as IdParams
      const order = await orders.replaceItems(caller(request), id, (request.body as ItemsBody).items, ifMatch(request))
      return sendRecord(reply, order)
    },

    deleteOrder: async (request, reply) => {
      const { id } = request.params as IdParams
      await orders.remove(caller(request), id, ifMatch(request))
      return reply.code(204).send()
    },

    listOrderItems: async (request, reply) => {
      const { id } = request.params as IdParams
      const query = request.query as { cursor?: string; limit: number; fields?: string }
      const page = await orders.listItems(caller(request), id, { cursor: query.cursor, limit: query.limit })
      return sendNestedCollection(reply, page, query.fields)
    },

    listUserOrders: async (request, reply) => {
      const { id } = request.params as IdParams
      const query = request.query as Omit<ListQuery, 'user_id'>
      const page = await orders.listOfUser(caller(request), id, {
        status: query.status,
        sort: query.sort,
        cursor: query.cursor,
        limit: query.limit,
      })
      return sendNestedCollection(reply, page, query.fields)
    },

    payOrder: action('payment'),
    cancelOrder: action('cancellation'),
    refundOrder: action('refund'),
  }
}
