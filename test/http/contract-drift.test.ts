/**
 * The small drift between the contract and the service's answers (decisions §6, §7, §12), each
 * with the request that showed it. Every /api/v1 response here is also checked against
 * openapi.yaml by the test helper, so an undeclared status fails the test that received it.
 */
import t from 'tap'
import { bearer, build, createOrder } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write articles:write')

async function pendingOrder(app: Awaited<ReturnType<typeof build>>): Promise<number> {
  const response = await createOrder(app, [{ sku: 'CB-404', qty: 1 }], grace)
  return (response.json() as { id: number }).id
}

t.test('DELETE /orders/{id} and /articles/{id} declare the 400 they answer for a non-canonical id', async (t) => {
  const app = await build(t)
  for (const url of ['/api/v1/orders/0x10', '/api/v1/articles/3.0']) {
    const response = await app.inject({ method: 'DELETE', url, headers: grace })
    t.equal(response.statusCode, 400, url)
    t.equal(response.json().code, 'VALIDATION_FAILED')
  }
})

t.test('the contract documents declare the 429 their rate limit answers with', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '1' } })
  for (const url of ['/api/v1/openapi.json', '/api/v1/openapi.yaml']) {
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) statuses.push((await app.inject({ method: 'GET', url })).statusCode)
    t.ok(statuses.includes(429), `${url} is rate limited (${statuses.join(', ')}), and the contract allows it`)
  }
})

t.test('an action POST with Content-Type: application/json and an empty body is the same as no body', async (t) => {
  const app = await build(t)
  const withType = await pendingOrder(app)
  const without = await pendingOrder(app)
  const typed = await app.inject({
    method: 'POST',
    url: `/api/v1/orders/${withType}/payment`,
    headers: { ...grace, 'content-type': 'application/json' },
    payload: '',
  })
  const bare = await app.inject({ method: 'POST', url: `/api/v1/orders/${without}/payment`, headers: grace })
  t.equal(typed.statusCode, 200, typed.body)
  t.equal(bare.statusCode, 200)
  t.equal(typed.json().status, 'paid')
  t.equal(bare.json().status, 'paid')
  // A body the operation requires is still required.
  const create = await app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...grace, 'content-type': 'application/json' },
    payload: '',
  })
  t.equal(create.statusCode, 400)
})

t.test('an Idempotency-Key in the RFC 8941 string form "abc" is the same key as abc', async (t) => {
  const app = await build(t)
  const payload = { items: [{ sku: 'CB-404', qty: 2 }] }
  const count = async () =>
    Number(
      (
        await app.db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  const before = await count()
  const quoted = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': '"abc-1"' }, payload })
  const bare = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': 'abc-1' }, payload })
  t.equal(quoted.statusCode, 201)
  t.equal(bare.statusCode, 201)
  t.equal(bare.headers['idempotent-replayed'], 'true', 'the bare key replays the quoted one')
  t.equal(bare.json().id, quoted.json().id)
  t.equal(await count(), before + 1, 'one order, not two')
  // An sf-string's escapes are read too: "a\"b" is the key a"b.
  const escaped = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': '"a\\"b"' }, payload })
  const plain = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': 'a"b' }, payload })
  t.equal(plain.headers['idempotent-replayed'], 'true')
  t.equal(plain.json().id, escaped.json().id)
  const empty = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': '""' }, payload })
  t.equal(empty.statusCode, 400, 'the empty string is no key')
})

t.test('If-Match compares strongly: W/"…" never matches, and nothing changes', async (t) => {
  const app = await build(t)
  const id = await pendingOrder(app)
  const etag = (await app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: grace })).headers.etag as string
  const weak = await app.inject({
    method: 'POST',
    url: `/api/v1/orders/${id}/cancellation`,
    headers: { ...grace, 'if-match': `W/${etag}` },
  })
  t.equal(weak.statusCode, 412)
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: grace })).json().status, 'pending', 'nothing changed')
  const weakDelete = await app.inject({
    method: 'DELETE',
    url: `/api/v1/orders/${id}`,
    headers: { ...grace, 'if-match': `"x", W/${etag}` },
  })
  t.equal(weakDelete.statusCode, 412)
  const strong = await app.inject({ method: 'POST', url: `/api/v1/orders/${id}/cancellation`, headers: { ...grace, 'if-match': etag } })
  t.equal(strong.statusCode, 200)
  t.equal(strong.json().status, 'cancelled')
})
