import t from 'tap'
import { bearer, build, createOrder } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const admin = bearer(1, 'admin')

t.test("GET /orders: envelope A with the caller's orders, newest first, and list caching headers", async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: grace })
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['data', 'page'])
  t.ok(
    body.data.every((order: { user_id: number }) => order.user_id === 2),
    "only the caller's orders",
  )
  t.equal(body.page.total, body.data.length)
  t.equal(body.page.next, null)
  const created = body.data.map((order: { created_at: string }) => order.created_at)
  t.same(created, [...created].sort().reverse())
  t.equal(response.headers['cache-control'], 'private, max-age=30')
  t.equal(response.headers.vary, 'Authorization')
  t.match(response.headers.etag, /^"/)

  const revalidated = await app.inject({
    method: 'GET',
    url: '/api/v1/orders',
    headers: { ...grace, 'if-none-match': response.headers.etag as string },
  })
  t.equal(revalidated.statusCode, 304)
  t.equal(revalidated.body, '')
})

t.test('keyset pages see every surviving record exactly once while others are inserted and deleted', async (t) => {
  const app = await build(t)
  const ids: number[] = []
  for (let i = 0; i < 7; i++) {
    const created = await createOrder(app, [{ sku: 'CB-404', qty: i + 1 }], grace)
    ids.push(created.json().id)
  }
  const seen: number[] = []
  let url: string | null = '/api/v1/orders?limit=3&sort=-created_at&status=pending'
  let pages = 0
  while (url) {
    const response: { statusCode: number; json(): any } = await app.inject({ method: 'GET', url, headers: grace })
    t.equal(response.statusCode, 200)
    const body: any = response.json()
    seen.push(...body.data.map((order: { id: number }) => order.id))
    if (pages === 0) {
      // Between pages: a new order arrives (newer than the cursor, so not on later pages) and an
      // unseen one is deleted.
      await createOrder(app, [{ sku: 'CB-404', qty: 9 }], grace)
      await app.inject({ method: 'DELETE', url: `/api/v1/orders/${ids[0]}`, headers: grace })
      t.match(body.page.next, /^http:\/\/localhost\/api\/v1\/orders\?/)
      const next = new URL(body.page.next)
      t.equal(next.searchParams.get('limit'), '3')
      t.equal(next.searchParams.get('sort'), '-created_at')
      t.equal(next.searchParams.get('status'), 'pending')
    }
    url = body.page.next ? new URL(body.page.next).pathname + new URL(body.page.next).search : null
    pages++
  }
  t.equal(new Set(seen).size, seen.length, 'no record twice')
  const survivors = ids.slice(1)
  for (const id of survivors) t.ok(seen.includes(id), `order ${id} seen`)
  t.notOk(seen.includes(ids[0]!), 'the deleted order is not returned after its deletion')
})

t.test('sort in both directions on every allowed field', async (t) => {
  const app = await build(t)
  for (const field of ['created_at', 'total', 'id']) {
    for (const sort of [field, `-${field}`]) {
      const response = await app.inject({ method: 'GET', url: `/api/v1/orders?sort=${sort}`, headers: admin })
      t.equal(response.statusCode, 200, sort)
      const values = response.json().data.map((order: Record<string, string | number>) => order[field])
      const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      t.same(values, sort.startsWith('-') ? sorted.reverse() : sorted, `${sort} orders the data`)
    }
  }
})

t.test('bad list parameters are 400 problems naming the parameter', async (t) => {
  const app = await build(t)
  const cases = ['limit=0', 'limit=101', 'limit=ten', 'sort=name', 'status=shipped', 'fields=id,secret', 'cursor=forged', 'colour=red']
  for (const query of cases) {
    const response = await app.inject({ method: 'GET', url: `/api/v1/orders?${query}`, headers: grace })
    t.equal(response.statusCode, 400, query)
    t.equal(response.json().errors?.[0]?.in, 'query', `${query} is reported in the query`)
  }
  const first = await app.inject({ method: 'GET', url: '/api/v1/orders?limit=1&sort=total', headers: grace })
  const cursor = new URL(first.json().page.next).searchParams.get('cursor')!
  const conflicting = await app.inject({
    method: 'GET',
    url: `/api/v1/orders?cursor=${encodeURIComponent(cursor)}&sort=-total`,
    headers: grace,
  })
  t.equal(conflicting.statusCode, 400, 'a sort that conflicts with the cursor')
  const tampered = cursor.slice(0, -2) + (cursor.endsWith('A') ? 'BB' : 'AA')
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/orders?cursor=${encodeURIComponent(tampered)}`, headers: grace })).statusCode,
    400,
  )
  const foreign = await app.inject({
    method: 'GET',
    url: `/api/v1/orders?cursor=${encodeURIComponent(cursor)}`,
    headers: bearer(3, 'orders:read'),
  })
  t.equal(foreign.statusCode, 400, "another caller's cursor is foreign")
})

t.test('fields= returns exactly the named fields, on lists and single records', async (t) => {
  const app = await build(t)
  const list = await app.inject({
    method: 'GET',
    url: '/api/v1/orders?fields=id,total',
    headers: grace,
  })
  t.equal(list.statusCode, 200)
  for (const order of list.json().data) t.same(Object.keys(order), ['id', 'total'])
  const id = list.json().data[0].id
  const one = await app.inject({
    method: 'GET',
    url: `/api/v1/orders/${id}?fields=status`,
    headers: grace,
  })
  t.same(Object.keys(one.json()), ['status'])
})

t.test("admins list everyone's orders and may filter by user; others may not", async (t) => {
  const app = await build(t)
  const all = await app.inject({ method: 'GET', url: '/api/v1/orders?limit=100', headers: admin })
  t.ok(new Set(all.json().data.map((order: { user_id: number }) => order.user_id)).size > 1)
  const alans = await app.inject({ method: 'GET', url: '/api/v1/orders?user_id=3', headers: admin })
  t.ok(alans.json().data.every((order: { user_id: number }) => order.user_id === 3))
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders?user_id=3', headers: grace })).statusCode, 403)
})

t.test('nested lists use envelope B: items of an order, orders of a user', async (t) => {
  const app = await build(t)
  const mine = await app.inject({ method: 'GET', url: '/api/v1/users/2/orders?limit=2', headers: grace })
  t.equal(mine.statusCode, 200)
  t.same(Object.keys(mine.json()).sort(), ['data', 'next_cursor'])
  t.equal(mine.json().data.length, 2)
  t.type(mine.json().next_cursor, 'string')
  const rest = await app.inject({
    method: 'GET',
    url: `/api/v1/users/2/orders?limit=2&cursor=${encodeURIComponent(mine.json().next_cursor)}`,
    headers: grace,
  })
  t.equal(rest.json().next_cursor, null)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/3/orders', headers: grace })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/999/orders', headers: admin })).statusCode, 404)

  const orderId = mine.json().data[0].id
  const items = await app.inject({ method: 'GET', url: `/api/v1/orders/${orderId}/items`, headers: grace })
  t.equal(items.statusCode, 200)
  t.same(Object.keys(items.json()).sort(), ['data', 'next_cursor'])
  t.ok(items.json().data.length >= 1)
  t.equal(items.headers['cache-control'], 'private, max-age=30')
})
