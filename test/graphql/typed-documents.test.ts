import t from 'tap'
import { CreateOrderDocument, OrdersPageDocument, UserWithRecentOrdersDocument } from '../../src/generated/graphql/operations.ts'
import { graphqlClient } from '../graphql-client.ts'
import { bearer, build } from '../helper.ts'

t.test('the documents of operations/ drive the endpoint with typed variables and results', async (t) => {
  const app = await build(t)
  const client = graphqlClient(app, bearer(2, 'orders:read orders:write'))

  const created = await client.execute(CreateOrderDocument, {
    input: { items: [{ sku: 'HD-505', qty: 1 }] },
    idempotencyKey: 'typed-doc-1',
  })
  t.notOk(created.errors)
  const order = created.data!.createOrder!
  t.equal(order.total, 14900)
  t.equal(order.status, 'pending')

  // Paged through the connection: the cursor is the page's, not the record's (Order.cursor is deprecated).
  const page = await client.execute(OrdersPageDocument, { status: 'pending', first: 1 })
  const first = page.data!.ordersConnection
  t.equal(first.edges[0]!.node.id, order.id, 'newest first')
  t.equal(first.pageInfo.hasNextPage, true)
  const next = await client.execute(OrdersPageDocument, { status: 'pending', first: 1, after: first.pageInfo.endCursor })
  t.not(next.data!.ordersConnection.edges[0]!.node.id, order.id)

  const user = await client.execute(UserWithRecentOrdersDocument, { id: '2', last: 2 })
  const recent = user.data!.user!.orders
  t.equal(recent.length, 2)
  t.equal(recent.at(-1)!.id, order.id, 'the most recent order comes last')
})

t.test('a persisted-only server runs the same documents by hash alone', async (t) => {
  const app = await build(t, { env: { GRAPHQL_PERSISTED_ONLY: 'true' } })
  const client = graphqlClient(app, bearer(2, 'orders:read'))
  const response = await client.execute(UserWithRecentOrdersDocument, { id: '2' }, { byHashOnly: true })
  t.notOk(response.errors)
  t.equal(response.data!.user!.name, 'Grace Hopper')
})
