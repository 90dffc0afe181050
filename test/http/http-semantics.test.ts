import t from 'tap'
import { bearer, build } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write articles:write')

t.test('Accept: application/vnd.api+json; version=1 is served like JSON; another version is 406', async (t) => {
  const app = await build(t)
  const v1 = await app.inject({
    method: 'GET',
    url: '/api/v1/orders/3',
    headers: { ...grace, accept: 'application/vnd.api+json; version=1' },
  })
  t.equal(v1.statusCode, 200)
  t.equal(v1.json().id, 3)
  const v2 = await app.inject({
    method: 'GET',
    url: '/api/v1/orders/3',
    headers: { ...grace, accept: 'application/vnd.api+json; version=2' },
  })
  t.equal(v2.statusCode, 406)
  t.match(v2.headers['content-type'], /^application\/problem\+json/)
  t.equal(v2.json().code, 'VERSION_NOT_ACCEPTABLE')
})

t.test('a body over 1 MiB is 413 and changes nothing', async (t) => {
  const app = await build(t)
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: { ...grace, 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Big', body: 'x'.repeat(1024 * 1024 + 10) }),
  })
  t.equal(response.statusCode, 413)
  t.equal(response.json().code, 'PAYLOAD_TOO_LARGE')
  const articles = await app.db.selectFrom('articles').select('id').execute()
  t.equal(articles.length, 3)
})

t.test('a known path with the wrong method is 405 with Allow; an unknown path is a 404 problem', async (t) => {
  const app = await build(t)
  const wrong = await app.inject({ method: 'PUT', url: '/api/v1/orders', headers: grace })
  t.equal(wrong.statusCode, 405)
  t.equal(wrong.headers.allow, 'GET, HEAD, POST')
  t.match(wrong.headers['content-type'], /^application\/problem\+json/)
  const missing = await app.inject({ method: 'GET', url: '/api/v1/invoices', headers: grace })
  t.equal(missing.statusCode, 404)
  t.match(missing.json(), { status: 404, code: 'NOT_FOUND', type: '/problems/not-found' })
})

t.test('articles sort in both directions on every allowed field', async (t) => {
  const app = await build(t)
  for (const field of ['created_at', 'title', 'id']) {
    for (const sort of [field, `-${field}`]) {
      const response = await app.inject({ method: 'GET', url: `/api/v1/articles?sort=${sort}`, headers: grace })
      t.equal(response.statusCode, 200, sort)
      const values = response.json().data.map((article: Record<string, string | number>) => article[field])
      const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      t.same(values, sort.startsWith('-') ? sorted.reverse() : sorted, `${sort} orders the data`)
    }
  }
})

t.test('responses never carry a field the contract does not name', async (t) => {
  const app = await build(t)
  // A column the API does not expose, added to the table behind the contract's back.
  await app.db.schema
    .alterTable('orders')
    .addColumn('internal_note', 'text', (c) => c.defaultTo('secret'))
    .execute()
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: grace })
  t.equal(response.statusCode, 200)
  t.notMatch(response.body, /internal_note|secret/)
})
