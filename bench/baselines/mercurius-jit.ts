/**
 * Baseline (c): plain Fastify + Mercurius with its loaders and graphql-jit (`jit: 1`, compile on
 * the first run), over pg (or PGlite), serving the two bench GraphQL queries with the service's
 * JWT check and rules; each loader is one `= any($1)` statement per execution step.
 */
import Fastify, { type FastifyRequest } from 'fastify'
import mercurius, { type MercuriusContext } from 'mercurius'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'
import { type BaselineCaller, createAuthenticate } from './auth.ts'
import { createBatches, type OrderRow, pageSize, requireOrdersRead, requireUserReadable, typeDefs, type UserRow } from './graphql-data.ts'
import { openSqlClient } from './sql-client.ts'

const authenticate = createAuthenticate(process.env.JWT_SECRET ?? '')
const sql = await openSqlClient()
const batches = createBatches(sql)
const app = Fastify({ logger: false })

// The caller of each request, verified once in onRequest; resolvers reach it through the reply
// Mercurius puts on every context (a map keeps it off the shared context and request types).
const callers = new WeakMap<FastifyRequest, BaselineCaller | null>()
app.addHook('onRequest', async (request) => {
  callers.set(request, authenticate(request.headers.authorization))
})
const callerOf = (ctx: MercuriusContext): BaselineCaller | null => callers.get(ctx.reply.request) ?? null

await app.register(mercurius, {
  schema: typeDefs,
  jit: 1,
  resolvers: {
    Query: {
      user: async (_: unknown, args: { id: string }, ctx: MercuriusContext) => {
        const id = Number(args.id)
        requireUserReadable(callerOf(ctx), id)
        const [user] = await batches.usersByIds([id])
        return user
      },
      orders: (_: unknown, args: { first?: number | null }, ctx: MercuriusContext) => {
        const caller = requireOrdersRead(callerOf(ctx))
        return batches.orderPage(pageSize(args.first, 20, 'first'), caller.admin ? null : caller.userId)
      },
    },
    // The service's GraphQL `id` is the order's global id (decisions §13): the same JSON, the same work.
    Order: {
      id: (order: OrderRow) => toGlobalId('Order', order.id),
    },
  },
  loaders: {
    User: {
      company: (queries: Array<{ obj: UserRow }>) =>
        batches
          .companiesByIds(queries.map(({ obj }) => obj.company_id ?? 0))
          .then((companies) => queries.map(({ obj }, index) => (obj.company_id === null ? null : companies[index]))),
      orders: async (queries: Array<{ obj: UserRow; params: { last?: number | null } }>, ctx: MercuriusContext) => {
        requireOrdersRead(callerOf(ctx))
        // Mercurius batches one field across parents; a different `last` per parent gets its own statement.
        const byLast = new Map<number, number[]>()
        for (const { obj, params } of queries) {
          const last = pageSize(params.last, 20, 'last')
          byLast.set(last, [...(byLast.get(last) ?? []), obj.id])
        }
        const results = new Map<string, OrderRow[]>()
        for (const [last, ids] of byLast) {
          const lists = await batches.recentOrdersOfUsers(ids, last)
          for (const [index, id] of ids.entries()) results.set(`${last}:${id}`, lists[index]!)
        }
        return queries.map(({ obj, params }) => results.get(`${params.last ?? 20}:${obj.id}`) ?? [])
      },
    },
    Order: {
      user: (queries: Array<{ obj: OrderRow }>) => batches.usersByIds(queries.map(({ obj }) => obj.user_id)),
      items: (queries: Array<{ obj: OrderRow }>) => batches.itemsOfOrders(queries.map(({ obj }) => obj.id)),
    },
  },
})

app.get('/healthz', async () => ({ status: 'ok' }))
app.addHook('onClose', () => sql.close())
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
