/** REST handlers for the product catalog, by operationId. */
import type { AppConfig } from '../../config.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { answerWrite, caller, sendCollection } from '../../http/rest.ts'
import type { Product } from '../../contract-types.ts'
import type { ProductsService } from './products.service.ts'

export function productHandlers(products: ProductsService, config: AppConfig): OperationHandlers {
  return {
    listProducts: async (request, reply) => {
      const query = request.query as { cursor?: string; limit: number; fields?: string }
      const page = await products.list(caller(request), { cursor: query.cursor, limit: query.limit })
      return sendCollection(request, reply, config.publicUrl, page, query.fields)
    },

    createProduct: async (request, reply) => {
      const body = request.body as { sku: string; name: string; price: number }
      // The catalog has no per-product URL (the contract has no GET /products/{sku}), so no Location.
      return answerWrite<Product>(request, reply, (idempotency) => products.create(caller(request), body, { idempotency }), { status: 201 })
    },
  }
}
