/** REST handlers for the product catalog, by operationId. */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../../config.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { caller, idempotentPost, sendCollection } from '../../http/rest.ts'
import type { ProductsService } from './products.service.ts'

export function productHandlers(app: FastifyInstance, products: ProductsService, config: AppConfig): OperationHandlers {
  return {
    listProducts: async (request, reply) => {
      const query = request.query as { cursor?: string; limit: number; fields?: string }
      const page = await products.list(caller(request), { cursor: query.cursor, limit: query.limit })
      return sendCollection(request, reply, config.publicUrl, page, query.fields)
    },

    createProduct: async (request, reply) => {
      const body = request.body as { sku: string; name: string; price: number }
      // The catalog has no per-product URL (the contract has no GET /products/{sku}), so no Location.
      return idempotentPost(request, reply, app.db, async (executor) => ({
        status: 201,
        body: await products.create(caller(request), body, executor),
      }))
    },
  }
}
