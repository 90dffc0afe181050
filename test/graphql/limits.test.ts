import t from 'tap'
import { randomBytes } from 'node:crypto'
import { getIntrospectionQuery } from 'graphql'
import { bearer, build, createTestDatabase, gql, reachableRedis } from '../helper.ts'

const admin = bearer(1, 'admin')
const modern = { ...admin, accept: 'application/graphql-response+json' }

t.test("every response reports its cost and the caller's bucket (the worked example of docs/graphql.md)", async (t) => {
  const app = await build(t)
  const response = await gql(app, '{ orders(first: 10) { id items { sku product { name } } } }', admin)
  const body = response.json()
  t.notOk(body.errors)
  t.same(body.extensions.cost, {
    requestedQueryCost: 10 * (1 + 1 + 20 * (1 + 1 + (1 + 1))),
    throttleStatus: { maximumAvailable: 20000, currentlyAvailable: 20000 - 820, restoreRate: 1000 },
  })
  const variables = await gql(app, { query: 'query($n: Int) { users(first: $n) { orders(last: 2) { id } } }', variables: { n: 5 } }, admin)
  t.equal(variables.json().extensions.cost.requestedQueryCost, 5 * (1 + 2 * (1 + 1)), 'first/last from variables')
})

t.test('variables are priced as the resolvers receive them: declared defaults apply, a sent value overrides them', async (t) => {
  const app = await build(t)
  const cost = async (query: string, variables?: Record<string, unknown>) =>
    (await gql(app, { query, ...(variables ? { variables } : {}) }, admin)).json().extensions.cost.requestedQueryCost
  const paged = 'query($n: Int = 100) { orders(first: $n) { id } }'
  t.equal(await cost(paged), 100 * 2, 'the default, not the page size 20')
  t.equal(await cost(paged, {}), 100 * 2, 'an empty variables object too')
  t.equal(await cost(paged, { n: 5 }), 5 * 2, 'a sent value overrides the default')
  t.equal(await cost(paged, { n: null }), 20 * 2, 'an explicit null is no size: the page size')
  // @skip/@include with their variables decide what executes, so what is priced.
  const optional = 'query($more: Boolean = false) { me { name } orders(first: 50) @include(if: $more) { id } }'
  t.equal(await cost(optional), 1 + 1, 'left out by the default')
  t.equal(await cost(optional, { more: true }), 1 + 1 + 50 * 2)
  const fifty = Array.from({ length: 50 }, (_, i) => `a${i + 1}: name`).join(' ')
  t.equal(await cost(`{ me { ${fifty} } }`), 1 + 5, "docs/graphql.md's aliases: 50 scalars are 5 points")
})

t.test('an operation over the cost limit is refused before execution, without touching the database', async (t) => {
  let statements = 0
  // The outbox relay's polling would be counted too.
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  statements = 0
  const response = await gql(app, '{ orders(first: 100) { items { product { name } } user { orders(last: 100) { id } } } }', modern)
  t.equal(response.statusCode, 422)
  const body = response.json()
  t.equal(body.errors[0].extensions.code, 'COST_LIMIT_EXCEEDED')
  t.equal(
    body.extensions.cost.requestedQueryCost,
    100 * (1 + 20 * (1 + (1 + 1)) + (1 + 100 * 2)),
    "docs/graphql.md's refused example: 26,200",
  )
  t.equal(statements, 0, 'no SQL ran')
})

t.test('an empty bucket is RATE_LIMITED with 429 and Retry-After; introspection stays free', async (t) => {
  const app = await build(t, { env: { GRAPHQL_COST_BUCKET: '1000', GRAPHQL_COST_RESTORE_RATE: '1' } })
  const query = '{ orders(first: 10) { id items { sku product { name } } } }'
  t.notOk((await gql(app, query, admin)).json().errors)
  const limited = await gql(app, query, modern)
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().errors[0].extensions.code, 'RATE_LIMITED')
  t.match(limited.headers['retry-after'], /^\d+$/)
  t.ok(limited.json().extensions.cost.throttleStatus.currentlyAvailable < 820)
  const introspection = await gql(app, { query: getIntrospectionQuery() }, admin)
  t.notOk(introspection.json().errors, 'introspection costs nothing')
  t.equal(introspection.json().extensions.cost.requestedQueryCost, 0)
  const other = await gql(app, '{ me { name } }', bearer(2, 'orders:read'))
  t.notOk(other.json().errors, 'buckets are per caller')
})

t.test('two instances sharing Redis share one points bucket', async (t) => {
  const url = await reachableRedis(t)
  if (!url) return
  const env = { REDIS_URL: url, GRAPHQL_COST_BUCKET: '1000', GRAPHQL_COST_RESTORE_RATE: '1' }
  const database = await createTestDatabase(t)
  const a = await build(t, { env, database })
  const b = await build(t, { env, database })
  const caller = bearer(200_000 + randomBytes(2).readUInt16BE(0), 'admin')
  const query = '{ orders(first: 10) { id items { sku product { name } } } }'
  t.notOk((await gql(a, query, caller)).json().errors)
  const second = await gql(b, query, caller)
  t.equal(second.json().errors?.[0]?.extensions.code, 'RATE_LIMITED', 'the other instance sees the spent points')
})
