/** REST handlers for webhook endpoints and their deliveries, by operationId. */
import type { AppConfig } from '../../config.ts'
import { sendCollection, sendNestedCollection } from '../../http/envelopes.ts'
import { operationUrl } from '../../http/locations.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { requireCaller } from '../../auth/caller.ts'
import type { WebhooksService } from './webhooks.service.ts'

export function webhookHandlers(webhooks: WebhooksService, config: AppConfig): OperationHandlers {
  return {
    listWebhookEndpoints: async (request, reply) => {
      const { cursor, limit } = request.query
      const page = await webhooks.list(requireCaller(request), { cursor, limit })
      return sendCollection(request, reply, config.publicUrl, page, undefined)
    },

    createWebhookEndpoint: async (request, reply) => {
      const created = await webhooks.create(requireCaller(request), request.body)
      reply.header('location', operationUrl(request, config.publicUrl, 'getWebhookEndpoint', { id: created.id }))
      return reply.code(201).send(created)
    },

    getWebhookEndpoint: async (request, reply) => reply.send(await webhooks.get(requireCaller(request), request.params.id)),

    deleteWebhookEndpoint: async (request, reply) => {
      await webhooks.remove(requireCaller(request), request.params.id)
      return reply.code(204).send()
    },

    listWebhookDeliveries: async (request, reply) => {
      const { cursor, limit } = request.query
      const page = await webhooks.listDeliveries(requireCaller(request), request.params.id, { cursor, limit })
      return sendNestedCollection(reply, page, undefined)
    },

    listWebhookDeliveryAttempts: async (request, reply) => {
      const { cursor, limit } = request.query
      const { id, deliveryId } = request.params
      const page = await webhooks.listAttempts(requireCaller(request), id, deliveryId, { cursor, limit })
      return sendNestedCollection(reply, page, undefined)
    },

    retryWebhookDelivery: async (request, reply) => {
      const { id, deliveryId } = request.params
      return reply.code(202).send(await webhooks.retry(requireCaller(request), id, deliveryId))
    },
  }
}
