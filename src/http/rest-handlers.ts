/** Every module's REST handlers, keyed by operationId, for the contract router. */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../config.ts'
import type { ServedContract } from './served-contract.ts'
import type { OperationHandlers } from './register-operations.ts'
import { articleHandlers } from '../modules/articles/articles.routes.ts'
import { eventHandlers } from '../modules/events/events.routes.ts'
import { metaHandlers } from '../modules/meta/meta.routes.ts'
import { orderHandlers } from '../modules/orders/orders.routes.ts'
import { productHandlers } from '../modules/products/products.routes.ts'
import { userHandlers } from '../modules/users/users.routes.ts'
import { webhookHandlers } from '../modules/webhooks/webhooks.routes.ts'

export interface RestHandlerDependencies {
  app: FastifyInstance
  config: AppConfig
  /** The contract as served (openapi.yaml with this server in `servers`). */
  served: ServedContract
}

export function restHandlers({ app, config, served }: RestHandlerDependencies): OperationHandlers {
  return {
    ...metaHandlers(served),
    ...orderHandlers(app.services.orders, config),
    ...userHandlers(app.services.users, config),
    ...productHandlers(app.services.products, config),
    ...articleHandlers(app.services.articles, config),
    ...eventHandlers(app),
    ...webhookHandlers(app.services.webhooks, config),
  }
}
