/**
 * The domain services, built once per app from explicit dependencies. REST handlers and GraphQL
 * resolvers both reach them through `app.services`, so both styles run the same rules.
 */
import type { Kysely } from 'kysely'
import type { AppConfig } from './config.ts'
import type { Database } from './db/schema.ts'
import { createCursorCodec } from './pagination/cursor.ts'
import { createArticlesService } from './modules/articles/articles.service.ts'
import { createOrdersService } from './modules/orders/orders.service.ts'
import { createProductsService } from './modules/products/products.service.ts'
import { createUsersService } from './modules/users/users.service.ts'

export function createServices(dependencies: { db: Kysely<Database>; config: AppConfig }) {
  const cursors = createCursorCodec(dependencies.config.jwtSecret)
  return {
    cursors,
    orders: createOrdersService({ db: dependencies.db, cursors }),
    users: createUsersService({ db: dependencies.db, cursors }),
    products: createProductsService({ db: dependencies.db, cursors }),
    articles: createArticlesService({ db: dependencies.db, cursors }),
  }
}

export type Services = ReturnType<typeof createServices>

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
  }
}
