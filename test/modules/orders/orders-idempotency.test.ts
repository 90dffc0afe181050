import t from 'tap'
import { bearer, build, createOrder } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const body = { items: [{ sku: 'KB-101', qty: 1 }] }

async function countOrders(app: Awaited<ReturnType<typeof build>>): Promise<number> {
  const row = await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

t.test('a repeated POST with the same Idempotency-Key returns the stored response, marked replayed', async (t) => {
  const app = await build(t)
  const before = await countOrders(app)
  const send = () =>
    app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': 'order-2026-0001' }, payload: body })
  const first = await send()
  const second = await send()
  t.equal(first.statusCode, 201)
  t.equal(second.statusCode, 201)
  t.equal(first.headers['idempotent-replayed'], undefined)
  t.equal(second.headers['idempotent-replayed'], 'true')
  t.equal(second.headers.location, first.headers.location)
  t.same(second.json(), first.json())
  t.equal(await countOrders(app), before + 1, 'no second order')
  const events = await app.db.selectFrom('outbox').select('topic').execute()
  t.equal(events.length, 1, 'no second event')
})

t.test('the same key with a different request is 422 and changes nothing', async (t) => {
  const app = await build(t)
  const headers = { ...grace, 'idempotency-key': 'k-1' }
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload: body })).statusCode, 201)
  const before = await countOrders(app)
  const other = await createOrder(app, [{ sku: 'KB-101', qty: 2 }], headers)
  t.equal(other.statusCode, 422)
  t.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED')
  t.equal(await countOrders(app), before)
})

t.test('keys are scoped to the caller', async (t) => {
  const app = await build(t)
  const key = { 'idempotency-key': 'shared-key' }
  const a = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, ...key }, payload: body })
  const b = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(3, 'orders:write'), ...key }, payload: body })
  t.equal(a.statusCode, 201)
  t.equal(b.statusCode, 201)
  t.equal(b.headers['idempotent-replayed'], undefined)
  t.not(a.json().id, b.json().id)
})

t.test('a malformed key is 400', async (t) => {
  const app = await build(t)
  for (const key of ['', 'x'.repeat(256), 'tab\tkey', 'ключ']) {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...grace, 'idempotency-key': key },
      payload: body,
    })
    t.equal(response.statusCode, 400, JSON.stringify(key))
  }
})

t.test('a stored 4xx outcome replays, and its attempt left nothing behind', async (t) => {
  const app = await build(t)
  const headers = { ...grace, 'idempotency-key': 'bad-sku' }
  const payload = { items: [{ sku: 'NOPE-1', qty: 1 }] }
  const first = await app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload })
  const second = await app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload })
  t.equal(first.statusCode, 422)
  t.equal(second.statusCode, 422)
  t.equal(second.headers['idempotent-replayed'], 'true')
  // The same problem, but for the replaying request: its requestId names that request.
  const { requestId, ...replayed } = second.json()
  const { requestId: firstRequestId, ...original } = first.json()
  t.equal(requestId, second.headers['x-request-id'])
  t.equal(firstRequestId, first.headers['x-request-id'])
  t.same(replayed, original)
})

t.test('20 concurrent POSTs with one key create exactly one order', async (t) => {
  const app = await build(t)
  const before = await countOrders(app)
  const responses = await Promise.all(
    Array.from({ length: 20 }, () =>
      app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': 'race-1' }, payload: body }),
    ),
  )
  const statuses = responses.map((response) => response.statusCode)
  t.ok(
    statuses.every((status) => status === 201 || status === 409),
    `only 201s and 409s: ${statuses.join(',')}`,
  )
  const created = responses.filter((response) => response.statusCode === 201)
  t.ok(created.length >= 1)
  t.equal(new Set(created.map((response) => response.json().id)).size, 1, 'every 201 names the same order')
  for (const conflict of responses.filter((response) => response.statusCode === 409)) {
    t.equal(conflict.headers['retry-after'], '1')
    t.equal(conflict.json().code, 'IDEMPOTENCY_KEY_IN_USE')
  }
  t.equal(await countOrders(app), before + 1, 'exactly one order in the database')
})

t.test('action POSTs are idempotent too', async (t) => {
  const app = await build(t)
  const order = (await app.inject({ method: 'POST', url: '/api/v1/orders', headers: grace, payload: body })).json()
  const pay = () =>
    app.inject({ method: 'POST', url: `/api/v1/orders/${order.id}/payment`, headers: { ...grace, 'idempotency-key': 'pay-1' } })
  const first = await pay()
  const second = await pay()
  t.equal(first.statusCode, 200)
  t.equal(second.statusCode, 200, 'the retry is not a 409 "already paid"')
  t.equal(second.headers['idempotent-replayed'], 'true')
})
