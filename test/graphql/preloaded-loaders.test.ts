// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * A loader defined as `{ loader, preloaded }` (src/graphql/resolving/batched-loaders.ts) answers a parent
 * that carries its answer (a plan read it with the parent) without a load, null included, and
 * loads the others in one batch; every load carries its field's resolve info.
 */
import t from 'tap'
import type { GraphQLResolveInfo } from 'graphql'
import type { IResolverObject, MercuriusContext } from 'mercurius'
import { type LoaderQuery, withBatchedLoaders } from '../../src/graphql/resolving/batched-loaders.ts'

type Resolve = (obj: unknown, params: unknown, context: MercuriusContext, info: GraphQLResolveInfo) => unknown
type Order = { id: number; related?: { user?: string | null } }

function infoOf(fieldName: string): GraphQLResolveInfo {
  // Only `operation.operation` is read by the batcher; `fieldName` tells the infos apart here.
  return { operation: { operation: 'query' }, fieldName } as GraphQLResolveInfo
}

t.test('a parent that carries its answer is not loaded; the others are, in one batch, with their resolve info', async (t) => {
  const calls: LoaderQuery[][] = []
  const resolvers = withBatchedLoaders(
    {},
    {
      Order: {
        user: {
          loader: async (queries: LoaderQuery[]) => {
            calls.push(queries)
            return queries.map((query) => `loaded for ${(query.obj as Order).id}`)
          },
          preloaded: (order: Order) => order.related?.user,
        },
      },
    },
    { eventOutageWaitMs: 0 },
  )
  const resolve = (resolvers.Order as IResolverObject).user as Resolve
  const context = {} as MercuriusContext
  const info = infoOf('user')
  const carried: Order = { id: 1, related: { user: 'Ada, read with the order' } }
  t.equal(resolve(carried, {}, context, info), 'Ada, read with the order', 'answered at once, not through a promise')
  t.equal(resolve({ id: 2, related: { user: null } }, {}, context, info), null, 'null is an answer: a user the caller may not read')
  const answers = await Promise.all([
    resolve({ id: 3 }, {}, context, info),
    resolve({ id: 4, related: {} }, {}, context, info),
    resolve(carried, {}, context, info),
  ])
  t.same(answers, ['loaded for 3', 'loaded for 4', 'Ada, read with the order'])
  t.equal(calls.length, 1, 'one batch for the parents without their answer')
  t.same(
    calls[0]?.map((query) => (query.obj as Order).id),
    [3, 4],
  )
  t.ok(
    calls[0]?.every((query) => query.info === info),
    'each load carries its resolve info',
  )
})
