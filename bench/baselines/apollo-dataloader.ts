/**
 * Baseline (b): Apollo Server 5 (standalone HTTP server) + DataLoader + pg (or PGlite), serving
 * the two bench GraphQL queries with the service's JWT check and rules; one DataLoader per
 * relation per request, each backed by one `= any($1)` statement.
 */
import { ApolloServer } from '@apollo/server'
import { startStandaloneServer } from '@apollo/server/standalone'
import DataLoader from 'dataloader'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'
import { createAuthenticate } from './auth.ts'
import {
  type Batches,
  createBatches,
  type GraphqlContextBase,
  type OrderRow,
  pageSize,
  requireOrdersRead,
  requireUserReadable,
  typeDefs,
  type UserRow,
} from './graphql-data.ts'
import { openSqlClient } from './sql-client.ts'

const authenticate = createAuthenticate(process.env.JWT_SECRET ?? '')
const sql = await openSqlClient()
const batches = createBatches(sql)

function createLoaders(source: Batches) {
  const recentOrders = new Map<number, DataLoader<number, OrderRow[]>>()
  return {
    user: new DataLoader((ids: readonly number[]) => source.usersByIds(ids)),
    company: new DataLoader((ids: readonly number[]) => source.companiesByIds(ids)),
    items: new DataLoader((ids: readonly number[]) => source.itemsOfOrders(ids)),
    /** One loader per `last`, since the batch takes it as a parameter. */
    recentOrders(last: number): DataLoader<number, OrderRow[]> {
      let loader = recentOrders.get(last)
      if (!loader) {
        loader = new DataLoader((ids: readonly number[]) => source.recentOrdersOfUsers(ids, last))
        recentOrders.set(last, loader)
      }
      return loader
    },
  }
}

interface Context extends GraphqlContextBase {
  loaders: ReturnType<typeof createLoaders>
}

const server = new ApolloServer<Context>({
  typeDefs,
  resolvers: {
    Query: {
      user: (_: unknown, args: { id: string }, ctx: Context) => {
        const id = Number(args.id)
        requireUserReadable(ctx.caller, id)
        return ctx.loaders.user.load(id)
      },
      orders: (_: unknown, args: { first?: number | null }, ctx: Context) => {
        const caller = requireOrdersRead(ctx.caller)
        return batches.orderPage(pageSize(args.first, 20, 'first'), caller.admin ? null : caller.userId)
      },
    },
    User: {
      company: (user: UserRow, _: unknown, ctx: Context) => (user.company_id === null ? null : ctx.loaders.company.load(user.company_id)),
      orders: (user: UserRow, args: { last?: number | null }, ctx: Context) => {
        requireOrdersRead(ctx.caller)
        return ctx.loaders.recentOrders(pageSize(args.last, 20, 'last')).load(user.id)
      },
    },
    Order: {
      // The service's GraphQL `id` is the order's global id (decisions §13): the same JSON, the same work.
      id: (order: OrderRow) => toGlobalId('Order', order.id),
      user: (order: OrderRow, _: unknown, ctx: Context) => ctx.loaders.user.load(order.user_id),
      items: (order: OrderRow, _: unknown, ctx: Context) => ctx.loaders.items.load(order.id),
    },
  },
})

await startStandaloneServer(server, {
  listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) },
  context: async ({ req }) => ({ caller: authenticate(req.headers.authorization), loaders: createLoaders(batches) }),
})
process.on('SIGTERM', () => void server.stop().then(() => sql.close().then(() => process.exit(0))))
