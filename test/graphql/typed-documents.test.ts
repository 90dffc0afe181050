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

  const page = await client.execute(OrdersPageDocument, { status: 'pending', first: 1 })
  t.equal(page.data!.orders[0]!.id, order.id, 'newest first')
  const next = await client.execute(OrdersPageDocument, { status: 'pending', first: 1, after: page.data!.orders[0]!.cursor })
  t.not(next.data!.orders[0]!.id, order.id)

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
