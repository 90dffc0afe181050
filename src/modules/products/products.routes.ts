/** REST handlers for the product catalog, by operationId. */
import type { AppConfig } from '../../config.ts'
import { sendCollection } from '../../http/envelopes.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { answerWritten, idempotencyClaim } from '../../http/write-answers.ts'
import { requireCaller } from '../../auth/caller.ts'
import type { ProductsService } from './products.service.ts'

export function productHandlers(products: ProductsService, config: AppConfig): OperationHandlers {
  return {
    listProducts: async (request, reply) => {
      const { cursor, limit, fields } = request.query
      const page = await products.list(requireCaller(request), { cursor, limit })
      return sendCollection(request, reply, config.publicUrl, page, fields)
    },

    // The catalog has no per-product URL (the contract has no GET /products/{sku}), so no Location.
    createProduct: async (request, reply) => {
      const idempotency = idempotencyClaim(request)
      return answerWritten(reply, await products.create(requireCaller(request), request.body, { idempotency }))
    },
  }
}
