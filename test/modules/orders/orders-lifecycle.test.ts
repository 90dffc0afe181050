import t from 'tap'
import { bearer, build, createOrder } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const alan = bearer(3, 'orders:read orders:write')

t.test('POST /orders creates a pending order priced from the catalog, with Location and ETag', async (t) => {
  const app = await build(t)
  const response = await createOrder(app, [
    { sku: 'KB-101', qty: 2 },
    { sku: 'CB-404', qty: 1 },
  ])
  t.equal(response.statusCode, 201)
  const order = response.json()
  t.equal(order.status, 'pending')
  t.equal(order.total, 2 * 8900 + 1200, 'total = Σ qty × unit_price')
  t.same(order.items, [
    { sku: 'KB-101', qty: 2, unit_price: 8900 },
    { sku: 'CB-404', qty: 1, unit_price: 1200 },
  ])
  t.equal(order.user_id, 2)
  t.match(order.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.equal(response.headers.location, `http://localhost:80/api/v1/orders/${order.id}`)
  t.match(response.headers.etag, /^"[^"]+"$/)

  const fetched = await app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: grace })
  t.equal(fetched.statusCode, 200)
  t.same(fetched.json(), order)
  t.equal(fetched.headers.etag, response.headers.etag, 'the created representation and the GET carry the same ETag')
})

t.test('an unknown sku is 422 naming the item, and nothing is created', async (t) => {
  const app = await build(t)
  const before = await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  const response = await createOrder(app, [
    { sku: 'KB-101', qty: 1 },
    { sku: 'NOPE-1', qty: 1 },
  ])
  t.equal(response.statusCode, 422)
  t.match(response.headers['content-type'], /^application\/problem\+json/)
  t.match(response.json(), { status: 422, code: 'UNKNOWN_SKU', errors: [{ in: 'body', name: '/items/1/sku' }] })
  const after = await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  t.equal(Number(after.n), Number(before.n))
})

t.test('bodies are validated strictly: no coercion, no unknown fields, every error named', async (t) => {
  const app = await build(t)
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: grace,
    payload: {
      items: [
        { sku: 'KB-101', qty: '2' },
        { sku: 'MS-202', qty: 0 },
      ],
      coupon: 'FREE',
    },
  })
  t.equal(response.statusCode, 400)
  const problem = response.json()
  t.equal(problem.code, 'VALIDATION_FAILED')
  const names = problem.errors.map((error: { name: string }) => error.name)
  t.ok(names.includes('/items/0/qty'), '"2" is not coerced to 2')
  t.ok(names.includes('/items/1/qty'), 'qty 0 is out of range')
  t.ok(names.includes('/coupon'), 'an unknown field is refused')
  t.ok(problem.errors.every((error: { in: string }) => error.in === 'body'))

  const malformed = await app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...grace, 'content-type': 'application/json' },
    payload: '{"items": [',
  })
  t.equal(malformed.statusCode, 400)
  t.equal(malformed.json().code, 'MALFORMED_BODY')

  const wrongType = await app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...grace, 'content-type': 'text/plain' },
    payload: 'hello',
  })
  t.equal(wrongType.statusCode, 415)
})

t.test('the state machine: pay, refund, cancel, and 409 with the current status otherwise', async (t) => {
  const app = await build(t)
  const order = (await createOrder(app, [{ sku: 'MS-202', qty: 1 }])).json()
  const act = (action: string, headers = grace) =>
    app.inject({ method: 'POST', url: `/api/v1/orders/${order.id}/${action}`, headers, payload: { reason: 'test' } })

  t.equal((await act('refund')).statusCode, 409, 'a pending order cannot be refunded')
  const paid = await act('payment')
  t.equal(paid.statusCode, 200)
  t.equal(paid.json().status, 'paid')
  const again = await act('payment')
  t.equal(again.statusCode, 409)
  t.match(again.json().detail, /paid/)
  t.equal((await act('cancellation')).statusCode, 409, 'a paid order cannot be cancelled')
  const refunded = await act('refund')
  t.equal(refunded.statusCode, 200)
  t.equal(refunded.json().status, 'refunded')

  const other = (await createOrder(app, [{ sku: 'MS-202', qty: 1 }])).json()
  const cancelled = await app.inject({ method: 'POST', url: `/api/v1/orders/${other.id}/cancellation`, headers: grace })
  t.equal(cancelled.statusCode, 200, 'the action body is optional')
  t.equal(cancelled.json().status, 'cancelled')

  const events = await app.db.selectFrom('outbox').select(['topic', 'payload']).orderBy('id').execute()
  t.same(
    events.map((event) => event.topic),
    ['order.created', 'order.status_changed', 'order.status_changed', 'order.created', 'order.status_changed'],
    'every change recorded its event in the outbox; refused actions recorded none',
  )
})

t.test("another user's order is 403, a missing one 404", async (t) => {
  const app = await build(t)
  const order = (await createOrder(app, [{ sku: 'MS-202', qty: 1 }])).json()
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: alan })).statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url: `/api/v1/orders/${order.id}/payment`, headers: alan })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders/999999', headers: grace })).statusCode, 404)
  const admin = await app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: bearer(1, 'admin') })
  t.equal(admin.statusCode, 200, 'an admin sees every order')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders/abc', headers: grace })).statusCode, 400)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders/99999999999', headers: grace })).statusCode, 400)
})

t.test('PUT and PATCH change items while pending, recompute the total, and honour If-Match', async (t) => {
  const app = await build(t)
  const created = await createOrder(app, [{ sku: 'MS-202', qty: 1 }])
  const order = created.json()
  const url = `/api/v1/orders/${order.id}`

  const put = await app.inject({
    method: 'PUT',
    url,
    headers: { ...grace, 'if-match': created.headers.etag as string },
    payload: { ...order, items: [{ sku: 'HD-505', qty: 2, unit_price: 1 }], total: 1, status: 'paid' },
  })
  t.equal(put.statusCode, 200)
  t.equal(put.json().total, 2 * 14900, 'the total comes from the catalog, not the body')
  t.equal(put.json().status, 'pending', 'read-only fields in the body are ignored')
  t.equal(put.json().items[0].unit_price, 14900)

  const stale = await app.inject({
    method: 'PATCH',
    url,
    headers: { ...grace, 'if-match': created.headers.etag as string, 'content-type': 'application/merge-patch+json' },
    payload: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
  })
  t.equal(stale.statusCode, 412, 'a stale If-Match changes nothing')
  const unchanged = await app.inject({ method: 'GET', url, headers: grace })
  t.equal(unchanged.json().total, 2 * 14900)

  const patch = await app.inject({
    method: 'PATCH',
    url,
    headers: { ...grace, 'if-match': put.headers.etag as string, 'content-type': 'application/merge-patch+json' },
    payload: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
  })
  t.equal(patch.statusCode, 200)
  t.equal(patch.json().total, 8900)

  t.equal((await app.inject({ method: 'PUT', url, headers: grace, payload: {} })).statusCode, 400, 'PUT without items is 400')

  await app.inject({ method: 'POST', url: `${url}/payment`, headers: grace })
  const locked = await app.inject({ method: 'PATCH', url, headers: grace, payload: { items: [{ sku: 'KB-101', qty: 3 }] } })
  t.equal(locked.statusCode, 409, 'a paid order cannot be edited')
})

t.test('DELETE removes pending and cancelled orders; paid ones are financial records', async (t) => {
  const app = await build(t)
  const order = (await createOrder(app, [{ sku: 'MS-202', qty: 1 }])).json()
  const url = `/api/v1/orders/${order.id}`
  const deleted = await app.inject({ method: 'DELETE', url, headers: grace })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.body, '')
  t.equal((await app.inject({ method: 'GET', url, headers: grace })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url, headers: grace })).statusCode, 404)

  const paid = (await createOrder(app, [{ sku: 'MS-202', qty: 1 }])).json()
  await app.inject({ method: 'POST', url: `/api/v1/orders/${paid.id}/payment`, headers: grace })
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v1/orders/${paid.id}`, headers: grace })).statusCode, 409)
})
