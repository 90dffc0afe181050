/**
 * Every module's REST handlers, keyed by operationId, for the contract router (src/app.ts hands
 * them to http/register-operations.ts). The list lives with the modules: the transport routes
 * what it is given and knows no module.
 */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../config.ts'
import type { OperationHandlers } from '../http/register-operations.ts'
import type { ServedContract } from '../http/served-contract.ts'
import { articleHandlers } from './articles/articles.routes.ts'
import { eventHandlers } from './events/events.routes.ts'
import { metaHandlers } from './meta/meta.routes.ts'
import { orderHandlers } from './orders/orders.routes.ts'
import { productHandlers } from './products/products.routes.ts'
import { userHandlers } from './users/users.routes.ts'
import { webhookHandlers } from './webhooks/webhooks.routes.ts'

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
