/**
 * REST sends an order as the JSON text PostgreSQL built (orders.repository.ts orderTextColumns and
 * itemsJson): compact, its items in stored sequence, the bytes JSON.stringify would write for the
 * same value, and the same items GraphQL's plans read through the same aggregate.
 */
import t from 'tap'
import { bearer, build, createOrder, gql } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')

t.test("an order's text is compact JSON, its items in stored sequence, and GraphQL's plans read the same items", async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const items = [
    { sku: 'MS-202', qty: 1 },
    { sku: 'KB-101', qty: 2 },
    { sku: 'CB-404', qty: 3 },
  ]
  const created = await createOrder(app, items, grace)
  t.equal(created.statusCode, 201)
  const id = created.json().id as number

  const read = await app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: grace })
  t.equal(read.statusCode, 200)
  t.equal(read.body, JSON.stringify(read.json()), 'GET /orders/{id}: compact text')
  t.same(
    read.json().items.map((item: { sku: string; qty: number }) => ({ sku: item.sku, qty: item.qty })),
    items,
    'in stored sequence',
  )
  t.same(Object.keys(read.json().items[0]), ['sku', 'qty', 'unit_price'], "each item's fields in the contract's order")

  for (const url of ['/api/v1/orders?limit=5', '/api/v1/users/2/orders?limit=5']) {
    const listed = await app.inject({ method: 'GET', url, headers: grace })
    t.equal(listed.statusCode, 200)
    t.equal(listed.body, JSON.stringify(listed.json()), `GET ${url}: compact text`)
    const order = (listed.json().data as Array<{ id: number; items: unknown }>).find((listedOrder) => listedOrder.id === id)
    t.same(order?.items, read.json().items, `GET ${url}: the same items`)
  }

  const planned = await gql(
    app,
    `{ orders(first: 5) { databaseId items { sku qty unitPrice } } me { orders(last: 5) { databaseId items { sku qty unitPrice } } } }`,
    grace,
  )
  const body = planned.json() as {
    data: Record<'orders' | 'me', unknown> & { me: { orders: unknown[] } }
    errors?: unknown
  }
  t.notOk(body.errors)
  const expected = {
    databaseId: id,
    items: read.json().items.map((item: { sku: string; qty: number; unit_price: number }) => ({
      sku: item.sku,
      qty: item.qty,
      unitPrice: item.unit_price,
    })),
  }
  t.same(
    (body.data.orders as Array<{ databaseId: number }>).find((order) => order.databaseId === id),
    expected,
    'Query.orders: the same items',
  )
  t.same(
    (body.data.me.orders as Array<{ databaseId: number }>).find((order) => order.databaseId === id),
    expected,
    "Query.me's orders: the same items",
  )
})
