/**
 * Connections carry `totalCount` where REST lists carry `page.total` (decisions §16): the same
 * number for the same caller and filters, a caller's own orders only, the filters a cursor carries
 * kept, and priced in the cost model as the count query it runs (TOTAL_COUNT_COST), not as a
 * scalar.
 */
import t from 'tap'
import { bearer, build, createOrder, gql } from '../helper.ts'
import { TOTAL_COUNT_COST } from '../../src/graphql/limits/cost.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

const admin = bearer(1, 'admin')
const grace = bearer(2, 'orders:read orders:write articles:write')
const alan = bearer(3, 'orders:read')

type Body = {
  data?: Record<string, { totalCount: number; edges: unknown[]; pageInfo: { endCursor: string | null } }>
  errors?: unknown[]
  extensions?: { cost?: { requestedQueryCost: number } }
}

async function graphql(app: Awaited<ReturnType<typeof build>>, headers: Record<string, string>, query: string): Promise<Body> {
  return (await gql(app, { query }, headers)).json() as Body
}

async function restTotal(app: Awaited<ReturnType<typeof build>>, headers: Record<string, string>, url: string): Promise<number> {
  const response = await app.inject({ method: 'GET', url, headers })
  t.equal(response.statusCode, 200, url)
  return response.json().page.total
}

t.test("totalCount equals REST's page.total for the same caller and filters", async (t) => {
  const app = await build(t)
  // A few more orders, so that the filters make a difference.
  for (const sku of ['KB-101', 'MS-202', 'CB-404']) t.equal((await createOrder(app, [{ sku, qty: 1 }])).statusCode, 201)
  t.equal((await createOrder(app, [{ sku: 'KB-101', qty: 1 }], bearer(3, 'orders:read orders:write'))).statusCode, 201)

  const cases: Array<{ who: Record<string, string>; field: string; rest: string }> = [
    { who: grace, field: 'ordersConnection(first: 1)', rest: '/api/v1/orders?limit=1' },
    { who: grace, field: 'ordersConnection(first: 1, status: pending)', rest: '/api/v1/orders?limit=1&status=pending' },
    { who: alan, field: 'ordersConnection(first: 1)', rest: '/api/v1/orders?limit=1' },
    { who: admin, field: 'ordersConnection(first: 1)', rest: '/api/v1/orders?limit=1' },
    { who: admin, field: `ordersConnection(first: 1, userId: "${toGlobalId('User', 2)}")`, rest: '/api/v1/orders?limit=1&user_id=2' },
    { who: admin, field: 'ordersConnection(first: 1, status: paid)', rest: '/api/v1/orders?limit=1&status=paid' },
    { who: admin, field: 'usersConnection(first: 1)', rest: '/api/v1/users?limit=1' },
    { who: grace, field: 'articlesConnection(first: 1)', rest: '/api/v1/articles?limit=1' },
    { who: grace, field: 'productsConnection(first: 1)', rest: '/api/v1/products?limit=1' },
  ]
  for (const { who, field, rest } of cases) {
    const body = await graphql(app, who, `{ c: ${field} { totalCount edges { cursor } } }`)
    t.notOk(body.errors, field)
    const expected = await restTotal(app, who, rest)
    t.equal(body.data!.c!.totalCount, expected, `${field} = ${rest}'s page.total (${expected})`)
    t.equal(body.data!.c!.edges.length, 1, 'the page itself is unchanged')
  }
})

t.test('totalCount counts only what the caller may list, and keeps the filters of a cursor', async (t) => {
  const app = await build(t)
  t.equal((await createOrder(app, [{ sku: 'KB-101', qty: 1 }], bearer(3, 'orders:read orders:write'))).statusCode, 201)
  const own = (await graphql(app, grace, '{ c: ordersConnection(first: 1) { totalCount } }')).data!.c!.totalCount
  const all = (await graphql(app, admin, '{ c: ordersConnection(first: 1) { totalCount } }')).data!.c!.totalCount
  const alans = (await graphql(app, alan, '{ c: ordersConnection(first: 1) { totalCount } }')).data!.c!.totalCount
  t.ok(own > 0 && alans > 0, 'each user has orders')
  t.equal(
    all,
    own + alans + (await restTotal(app, admin, '/api/v1/orders?user_id=1')) + (await restTotal(app, admin, '/api/v1/orders?user_id=4')),
  )
  t.ok(own < all, "a user's totalCount leaves out the others' orders")

  const first = await graphql(app, grace, '{ c: ordersConnection(first: 1, status: pending) { totalCount pageInfo { endCursor } } }')
  const cursor = first.data!.c!.pageInfo.endCursor
  const next = await graphql(app, grace, `{ c: ordersConnection(first: 1, after: "${cursor}") { totalCount } }`)
  t.equal(next.data!.c!.totalCount, first.data!.c!.totalCount, "after a cursor: every match of the cursor's filter, not what is left")

  const refused = await graphql(app, grace, '{ c: usersConnection(first: 1) { totalCount } }')
  t.ok(refused.errors, 'usersConnection stays admin-only, totalCount included')
})

t.test('a selected totalCount costs its count query', async (t) => {
  const app = await build(t)
  const cost = async (query: string) => (await graphql(app, admin, query)).extensions!.cost!.requestedQueryCost
  for (const field of ['ordersConnection', 'usersConnection', 'articlesConnection', 'productsConnection']) {
    const without = await cost(`{ ${field}(first: 5) { edges { cursor } } }`)
    const withCount = await cost(`{ ${field}(first: 5) { totalCount edges { cursor } } }`)
    t.equal(withCount, without + TOTAL_COUNT_COST, `${field}: totalCount adds ${TOTAL_COUNT_COST} points`)
  }
  t.equal(
    await cost('{ a: ordersConnection(first: 1) { totalCount } b: ordersConnection(first: 1) { totalCount } }'),
    2 * TOTAL_COUNT_COST,
    'each connection counts once',
  )
})
