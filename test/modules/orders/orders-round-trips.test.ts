/**
 * The hot order reads make one round trip each: the order with its items, a page with its items
 * and envelope A's total, and GraphQL's User.orders with the items. Statements are counted
 * through Kysely's log hook; the outbox relay is off so its polling is not counted.
 */
import t from 'tap'
import { bearer, build, createOrder, gql } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const admin = bearer(1, 'admin')

async function setup(t: Parameters<typeof build>[0]) {
  let statements = 0
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  const count = async <Answer>(request: () => Promise<Answer>) => {
    statements = 0
    const response = await request()
    return { response, statements }
  }
  return { app, count }
}

t.test('GET /orders/{id} reads the order and its items in one statement, with the same body and ETag', async (t) => {
  const { app, count } = await setup(t)
  const created = await createOrder(
    app,
    [
      { sku: 'KB-101', qty: 2 },
      { sku: 'MS-202', qty: 1 },
    ],
    grace,
  )
  t.equal(created.statusCode, 201)
  const { response, statements } = await count(() =>
    app.inject({ method: 'GET', url: `/api/v1/orders/${created.json().id}`, headers: grace }),
  )
  t.equal(response.statusCode, 200)
  t.equal(statements, 1, 'one statement')
  t.same(response.json(), created.json(), 'the same representation as the create answered')
  t.equal(response.headers.etag, created.headers.etag, 'and the same ETag')
})

t.test('GET /orders reads a page, its items and the total in one statement', async (t) => {
  const { app, count } = await setup(t)
  const first = await count(() => app.inject({ method: 'GET', url: '/api/v1/orders?limit=1', headers: admin }))
  t.equal(first.response.statusCode, 200)
  t.equal(first.statements, 1, 'one statement')
  const body = JSON.parse(first.response.body)
  t.ok(body.page.total >= 1, 'with the total')
  t.ok(body.data[0].items.length >= 1, 'and the items')
})

t.test("User.orders(last: N) reads each user's recent orders with their items in one statement", async (t) => {
  const { app, count } = await setup(t)
  const query = '{ user(id: "2") { orders(last: 10) { id items { sku qty } } } }'
  const { response, statements } = await count(() => gql(app, query, grace))
  t.equal(response.statusCode, 200)
  const body = JSON.parse(response.body)
  t.notOk(body.errors)
  t.ok(body.data.user.orders.length >= 1)
  t.equal(statements, 1, "the user's statement reads its orders with their items (Query.user's plan)")
  // With their owner selected under them, the orders are User.orders' own statement.
  const loaded = await count(() => gql(app, '{ user(id: "2") { orders(last: 10) { id user { name } items { sku qty } } } }', grace))
  t.notOk(JSON.parse(loaded.response.body).errors)
  t.equal(loaded.statements, 2, 'the user, then the orders with their items and owners')
})
