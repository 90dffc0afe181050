/** REST handlers for the product catalog, by operationId. */
import type { AppConfig } from '../../config.ts'
import { sendCollection } from '../../http/envelopes.ts'
import type { OperationHandlers, SparseReadHandler } from '../../http/register-operations.ts'
import { answerWritten, idempotencyClaim } from '../../http/write-answers.ts'
import { requireCaller } from '../../auth/caller.ts'
import type { ProductsService } from './products.service.ts'

export function productHandlers(products: ProductsService, config: AppConfig): OperationHandlers {
  // One read for the full list and its /sparse/ mirror with `fields` (decisions §16).
  const listProducts: SparseReadHandler<'listProducts'> = async (request, reply, fields) => {
    const { cursor, limit } = request.query
    const page = await products.list(requireCaller(request), { cursor, limit })
    return sendCollection(request, reply, config.publicUrl, page, fields)
  }

  return {
    listProducts: (request, reply) => listProducts(request, reply, undefined),
    listProductsSparse: (request, reply) => listProducts(request, reply, request.query.fields),

    // The catalog has no per-product URL (the contract has no GET /products/{sku}), so no Location.
    createProduct: async (request, reply) => {
      const idempotency = idempotencyClaim(request)
      return answerWritten(reply, await products.create(requireCaller(request), request.body, { idempotency }))
    },
  }
}
