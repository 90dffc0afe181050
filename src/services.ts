/**
 * The domain services, built once per app from explicit dependencies. REST handlers and GraphQL
 * resolvers both reach them through `app.services`, so both styles run the same rules.
 */
import type { Kysely } from 'kysely'
import { createCommandValidator } from './contract/command-validation.ts'
import type { AppConfig } from './config.ts'
import type { StatementTarget } from './db/compiled-statement.ts'
import type { Database } from './db/schema.ts'
import { createCursorCodec } from './pagination/cursor.ts'
import { createArticlesService } from './modules/articles/articles.service.ts'
import { createEventsService } from './events/events.service.ts'
import { createStreamTicketsService } from './modules/events/stream-tickets.service.ts'
import { createOrdersService } from './modules/orders/orders.service.ts'
import { createProductsService } from './modules/products/products.service.ts'
import { createUsersService } from './modules/users/users.service.ts'
import { createWebhooksService } from './modules/webhooks/webhooks.service.ts'

export function createServices(dependencies: {
  db: Kysely<Database>
  /** `db` with its short path for a fixed statement (compiled-statement.ts). */
  statements: StatementTarget
  config: AppConfig
  /** Tells caches that public data changed (references as in src/cache-references.ts). */
  invalidate?: (references: string[]) => Promise<void>
}) {
  const invalidate = dependencies.invalidate ?? (async () => {})
  const cursors = createCursorCodec(dependencies.config.cursorSecret)
  const commands = createCommandValidator()
  const { db, statements } = dependencies
  return {
    cursors,
    orders: createOrdersService({ db, statements, cursors, commands }),
    users: createUsersService({ db, statements, cursors, commands }),
    products: createProductsService({ db, statements, cursors, commands, invalidate }),
    articles: createArticlesService({ db, statements, cursors, commands, invalidate }),
    events: createEventsService({ db: dependencies.db, cursors }),
    streamTickets: createStreamTicketsService({ db: dependencies.db }),
    webhooks: createWebhooksService({ db: dependencies.db, cursors, config: dependencies.config.webhooks }),
  }
}

export type Services = ReturnType<typeof createServices>

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
  }
}
