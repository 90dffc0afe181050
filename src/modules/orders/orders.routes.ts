/** REST handlers for orders, by operationId: parse, call the service, shape the answer. */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../../config.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { baseUrl, caller, idempotentPost, ifMatch, nextPageUrl, parseFields, pick, sendRecord, sendSparse } from '../../http/rest.ts'
import type { OrderStatus } from '../../db/schema.ts'
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

export function orderHandlers(app: FastifyInstance, orders: OrdersService, config: AppConfig): OperationHandlers {
  const location = (request: Parameters<typeof baseUrl>[0], id: number) => `${baseUrl(request, config.publicUrl)}/api/v1/orders/${id}`

  const action = (kind: OrderAction): OperationHandlers['payOrder'] =>
    async (request, reply) => {
      const { id } = request.params as IdParams
      const reason = (request.body as { reason?: string } | undefined)?.reason
      return idempotentPost(request, reply, app.db, async (executor) => ({
        status: 200,
        body: await orders.transition(caller(request), id, kind, reason, executor, ifMatch(request)),
      }))
    }

  return {
    listOrders: async (request, reply) => {
      const query = request.query as ListQuery
      const fields = parseFields(query.fields)
      const page = await orders.list(caller(request), {
        status: query.status,
        userId: query.user_id,
        sort: query.sort,
        cursor: query.cursor,
        limit: query.limit,
      })
      const body = {
        data: page.data.map((order) => pick(order, fields)),
        page: { next: nextPageUrl(request, config.publicUrl, page.nextCursor), total: page.total },
      }
      return fields ? sendSparse(reply, body) : reply.send(body)
    },

    createOrder: async (request, reply) => {
      const body = request.body as Required<ItemsBody>
      return idempotentPost(request, reply, app.db, async (executor) => {
        const order = await orders.create(caller(request), { items: body.items }, executor)
        return { status: 201, body: order, location: location(request, order.id) }
      })
    },

    getOrder: async (request, reply) => {
      const { id } = request.params as IdParams
      const order = await orders.get(caller(request), id)
      return sendRecord(reply, order, parseFields((request.query as { fields?: string }).fields))
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
      const fields = parseFields(query.fields)
      const page = await orders.listItems(caller(request), id, { cursor: query.cursor, limit: query.limit })
      const body = { data: page.data.map((item) => pick(item, fields)), next_cursor: page.nextCursor }
      return fields ? sendSparse(reply, body) : reply.send(body)
    },

    listUserOrders: async (request, reply) => {
      const { id } = request.params as IdParams
      const query = request.query as Omit<ListQuery, 'user_id'>
      const fields = parseFields(query.fields)
      const page = await orders.listOfUser(caller(request), id, {
        status: query.status,
        sort: query.sort,
        cursor: query.cursor,
        limit: query.limit,
      })
      const body = { data: page.data.map((order) => pick(order, fields)), next_cursor: page.nextCursor }
      return fields ? sendSparse(reply, body) : reply.send(body)
    },

    payOrder: action('payment'),
    cancelOrder: action('cancellation'),
    refundOrder: action('refund'),
  }
}
