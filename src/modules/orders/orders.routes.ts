/** REST handlers for orders, by operationId: parse, call the service, shape the answer. */
import type { AppConfig } from '../../config.ts'
import { ifMatch } from '../../http/conditional-requests.ts'
import { sendCollectionText, sendNestedCollection, sendNestedCollectionText, sendRecord, sendRecordText } from '../../http/envelopes.ts'
import { operationUrl } from '../../http/locations.ts'
import type { OperationHandler, OperationHandlers } from '../../http/register-operations.ts'
import { answerWritten, idempotencyClaim } from '../../http/write-answers.ts'
import { requireCaller } from '../../auth/caller.ts'
import type { OrderAction, OrdersService } from './orders.service.ts'

export function orderHandlers(orders: OrdersService, config: AppConfig): OperationHandlers {
  // payOrder, cancelOrder and refundOrder take the same path and body.
  const action =
    (kind: OrderAction): OperationHandler<'payOrder'> =>
    async (request, reply) => {
      const idempotency = idempotencyClaim(request)
      const written = await orders.transition(requireCaller(request), request.params.id, kind, request.body.reason, {
        idempotency,
        precondition: ifMatch(request),
      })
      return answerWritten(reply, written)
    }

  // PUT and PATCH both replace an order's items (PATCH's body may leave them out): one handler.
  const replaceItems: OperationHandler<'updateOrder'> = async (request, reply) => {
    const order = await orders.replaceItems(requireCaller(request), request.params.id, request.body.items, ifMatch(request))
    return sendRecord(reply, order)
  }

  return {
    listOrders: async (request, reply) => {
      const { status, user_id, sort, cursor, limit, fields } = request.query
      // Envelope A shows the total and the next page's cursor only.
      const page = await orders.list(
        requireCaller(request),
        { status, userId: user_id, sort, cursor, limit },
        { cursors: 'next', total: true },
      )
      return sendCollectionText(request, reply, config.publicUrl, page, fields)
    },

    createOrder: async (request, reply) => {
      const idempotency = idempotencyClaim(request)
      const written = await orders.create(requireCaller(request), { items: request.body.items }, { idempotency })
      return answerWritten(reply, written, {
        location: (order) => operationUrl(request, config.publicUrl, 'getOrder', { id: order.id }),
      })
    },

    getOrder: async (request, reply) => {
      const order = await orders.getText(requireCaller(request), request.params.id)
      return sendRecordText(reply, order, request.query.fields)
    },

    replaceOrder: replaceItems,
    updateOrder: replaceItems,

    deleteOrder: async (request, reply) => {
      await orders.remove(requireCaller(request), request.params.id, ifMatch(request))
      return reply.code(204).send()
    },

    listOrderItems: async (request, reply) => {
      const { cursor, limit, fields } = request.query
      const page = await orders.listItems(requireCaller(request), request.params.id, { cursor, limit })
      return sendNestedCollection(reply, page, fields)
    },

    listUserOrders: async (request, reply) => {
      const { status, sort, cursor, limit, fields } = request.query
      // Envelope B shows neither a total nor any cursor but the next page's.
      const page = await orders.listOfUser(
        requireCaller(request),
        request.params.id,
        { status, sort, cursor, limit },
        { cursors: 'next', total: false },
      )
      return sendNestedCollectionText(reply, page, fields)
    },

    payOrder: action('payment'),
    cancelOrder: action('cancellation'),
    refundOrder: action('refund'),
  }
}
