// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * Loaders batch through our own resolvers (src/graphql/resolving/batched-loaders.ts): the loads of one tick
 * are one loader call, a repeated load in one request shares its answer, a subscription shares
 * nothing between events, and a loader that fails or miscounts fails every load of its batch.
 * The statement counts this gives whole queries are pinned in batching.test.ts.
 */
import t from 'tap'
import type { GraphQLResolveInfo } from 'graphql'
import type { IResolverObject, MercuriusContext, MercuriusLoaders } from 'mercurius'
import { withBatchedLoaders } from '../../src/graphql/resolving/batched-loaders.ts'
import { ApiError } from '../../src/errors.ts'

type Resolve = (obj: unknown, params: unknown, context: MercuriusContext, info: GraphQLResolveInfo) => Promise<unknown>

function infoOf(operation: 'query' | 'subscription', rootValue?: unknown): GraphQLResolveInfo {
  // Only `operation.operation` and `rootValue` (a subscription's event) are read.
  return { operation: { operation }, rootValue } as GraphQLResolveInfo
}

function contextOf(): MercuriusContext {
  // The context is only a key for the batches here.
  return {} as MercuriusContext
}

/** Order.user as a resolver over a recording loader. */
function orderUser(answer: (queries: Array<{ obj: unknown; params: unknown }>) => unknown, eventOutageWaitMs = 0) {
  const calls: Array<Array<{ obj: unknown; params: unknown }>> = []
  const loaders: MercuriusLoaders = {
    Order: {
      user: async (queries) => {
        calls.push(queries)
        return answer(queries)
      },
    },
  }
  const resolvers = withBatchedLoaders({}, loaders, { eventOutageWaitMs })
  const order = resolvers.Order as IResolverObject
  return { calls, resolve: order.user as Resolve }
}

t.test('the loads of one tick are one loader call, answered in order', async (t) => {
  const { calls, resolve } = orderUser((queries) => queries.map((query) => `user of ${(query.obj as { id: number }).id}`))
  const context = contextOf()
  const info = infoOf('query')
  const answers = await Promise.all([1, 2, 3].map((id) => resolve({ id }, {}, context, info)))
  t.same(answers, ['user of 1', 'user of 2', 'user of 3'])
  t.equal(calls.length, 1, 'one batch')
  t.equal(calls[0]?.length, 3)
})

t.test('within one request a repeated load of the same parent and arguments shares the answer', async (t) => {
  const { calls, resolve } = orderUser((queries) => queries.map(() => ({ name: 'Ada' })))
  const context = contextOf()
  const info = infoOf('query')
  const parent = { id: 1 }
  const first = await resolve(parent, { last: 2 }, context, info)
  const again = await resolve(parent, { last: 2 }, context, info)
  t.equal(again, first, 'the same answer, not a second load')
  await resolve(parent, { last: 3 }, context, info)
  await resolve({ id: 1 }, { last: 2 }, contextOf(), info)
  t.equal(calls.length, 3, 'other arguments, or another request, load again')
})

t.test('a subscription shares nothing between events: every event loads afresh', async (t) => {
  let name = 'Ada'
  const { calls, resolve } = orderUser((queries) => queries.map(() => name))
  const context = contextOf()
  const info = infoOf('subscription')
  const parent = { id: 1 }
  t.equal(await resolve(parent, {}, context, info), 'Ada')
  name = 'Grace'
  t.equal(await resolve(parent, {}, context, info), 'Grace', 'the next event sees the record as it is now')
  t.equal(calls.length, 2)
})

t.test("an Error in the answers is that parent's; a failing or miscounting loader fails its whole batch", async (t) => {
  const missing = new Error('User 2 was not found.')
  const partial = orderUser((queries) => queries.map((query) => ((query.obj as { id: number }).id === 2 ? missing : 'found')))
  const context = contextOf()
  const info = infoOf('query')
  t.same(await Promise.all([partial.resolve({ id: 1 }, {}, context, info), partial.resolve({ id: 2 }, {}, context, info)]), [
    'found',
    missing,
  ])

  const failing = orderUser(() => {
    throw new Error('connection lost')
  })
  const failed = [1, 2].map((id) => failing.resolve({ id }, {}, contextOf(), info))
  for (const load of failed) await t.rejects(load, { message: 'connection lost' })

  const miscounting = orderUser(() => ['only one'])
  const oneRequest = contextOf()
  const miscounted = [1, 2].map((id) => miscounting.resolve({ id }, {}, oneRequest, info))
  for (const load of miscounted) await t.rejects(load, { message: /answered 1 results for 2 parents/ })
})

t.test('a field with both a resolver and a loader is refused when the map is built', async (t) => {
  const loaders: MercuriusLoaders = { Order: { user: async (queries) => queries.map(() => null) } }
  t.throws(() => withBatchedLoaders({ Order: { user: () => null } }, loaders, { eventOutageWaitMs: 0 }), {
    message: 'Order.user has both a resolver and a loader',
  })
  const merged = withBatchedLoaders({ Order: { total: () => 1 } }, loaders, { eventOutageWaitMs: 0 }).Order as IResolverObject
  t.same(Object.keys(merged).sort(), ['total', 'user'], "a type's own resolvers are kept next to its loaders")
})

/** What pg raises while the server is away. */
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
const EVENT = { eventId: '7', orderId: 3, userId: 2, order: { id: 3 } }

t.test("a subscription event's load waits out a database outage; a request's fails at once", async (t) => {
  let failures = 2
  const { calls, resolve } = orderUser((queries) => {
    if (failures-- > 0) throw refused()
    return queries.map(() => ({ name: 'Grace' }))
  }, 10_000)
  t.same(await resolve({ id: 3 }, {}, contextOf(), infoOf('subscription', EVENT)), { name: 'Grace' }, 'answered once the database is back')
  t.equal(calls.length, 3, 'after two failed attempts')

  failures = 1
  await t.rejects(resolve({ id: 3 }, {}, contextOf(), infoOf('query')), { code: 'ECONNREFUSED' }, 'a request is answered 503 at once')
  t.equal(calls.length, 4)
})

t.test(
  'past the wait the load fails with DATABASE_UNAVAILABLE naming the event; other errors and closed connections are not waited for',
  async (t) => {
    const { calls, resolve } = orderUser(() => {
      throw refused()
    }, 200)
    const error = await resolve({ id: 3 }, {}, contextOf(), infoOf('subscription', EVENT)).catch((caught: unknown) => caught)
    t.ok(error instanceof ApiError)
    t.match(error, { code: 'DATABASE_UNAVAILABLE', extensions: { eventId: '7', orderId: '3', userId: '2' } })
    t.ok(calls.length >= 2, `retried (${calls.length} attempts)`)

    const other = orderUser(() => {
      throw new Error('a bug')
    }, 10_000)
    await t.rejects(other.resolve({ id: 3 }, {}, contextOf(), infoOf('subscription', EVENT)), { message: 'a bug' }, 'not an outage: as is')
    t.equal(other.calls.length, 1, 'and not retried')

    const closed = orderUser(() => {
      throw refused()
    }, 10_000)
    const context = { subscriptionOpen: () => false } as MercuriusContext
    await t.rejects(closed.resolve({ id: 3 }, {}, context, infoOf('subscription', EVENT)), { code: 'DATABASE_UNAVAILABLE' })
    t.equal(closed.calls.length, 1, 'a subscription whose connection closed is not retried')
  },
)
