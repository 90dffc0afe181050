/**
 * Sparse fieldsets are described truthfully (decisions §12, §16): every read that takes `fields=` is
 * a /sparse/ mirror of a full read, answering `application/json` with each record full or its
 * `…Sparse` part as openapi.yaml declares them; the full read always answers the full records and
 * refuses `fields=` (400). The contract validator checks every answer with no exception. Every
 * mirror is asked for one field, two and every field, and its full read for none.
 */
import t from 'tap'
import { contractViolations } from '../contract-validator.ts'
import { bearer, build } from '../helper.ts'

const admin = bearer(1, 'orders:read orders:write articles:write admin')

const operations: Array<{ url: string; all: string[] }> = [
  { url: '/api/v1/orders', all: ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at'] },
  { url: '/api/v1/orders/2', all: ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at'] },
  { url: '/api/v1/orders/2/items', all: ['sku', 'qty', 'unit_price'] },
  { url: '/api/v1/users', all: ['id', 'name', 'company_id', 'created_at'] },
  { url: '/api/v1/users/2', all: ['id', 'name', 'company_id', 'created_at'] },
  { url: '/api/v1/users/2/orders', all: ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at'] },
  { url: '/api/v1/articles', all: ['id', 'title', 'body', 'author_id', 'created_at', 'updated_at'] },
  { url: '/api/v1/articles/1', all: ['id', 'title', 'body', 'author_id', 'created_at', 'updated_at'] },
  { url: '/api/v1/articles/1/comments', all: ['id', 'article_id', 'author_id', 'body', 'created_at'] },
  { url: '/api/v1/products', all: ['sku', 'name', 'price'] },
]

t.test('every /sparse/ answer, and every full one, validates against openapi.yaml as it is, with no relaxation', async (t) => {
  // The helper checks each response too; here the verdict is also asserted directly.
  const app = await build(t)
  for (const { url, all } of operations) {
    const sparse = url.replace('/api/v1/', '/api/v1/sparse/')
    for (const fields of [undefined, all[1]!, all.slice(0, 2).join(','), all.join(',')]) {
      const full = fields === undefined ? url : `${sparse}?fields=${fields}`
      const response = await app.inject({ method: 'GET', url: full, headers: admin })
      t.equal(response.statusCode, 200, full)
      t.match(response.headers['content-type'], /^application\/json;/)
      const records = Array.isArray(response.json().data) ? response.json().data : [response.json()]
      t.same(Object.keys(records[0]).sort(), (fields === undefined ? all : fields.split(',')).sort(), `${full}: the fields asked for`)
      t.same(
        contractViolations({ method: 'GET', url: full, statusCode: 200, headers: response.headers, body: response.body }),
        [],
        `${full} matches the contract`,
      )
    }
  }
})

t.test('a full read refuses fields= (400, nothing read), and a /sparse/ read needs it', async (t) => {
  const app = await build(t)
  for (const url of ['/api/v1/orders/2?fields=id', '/api/v1/orders?fields=id,status']) {
    const response = await app.inject({ method: 'GET', url, headers: admin })
    t.equal(response.statusCode, 400, url)
    t.match(response.json(), {
      code: 'VALIDATION_FAILED',
      errors: [{ in: 'query', name: 'fields', message: /GET \/api\/v1\/sparse\/orders/ }],
    })
  }
  const bare = await app.inject({ method: 'GET', url: '/api/v1/sparse/orders/2', headers: admin })
  t.equal(bare.statusCode, 400, 'a /sparse/ read without fields=')
  t.match(bare.json(), { code: 'VALIDATION_FAILED', errors: [{ in: 'query', name: 'fields' }] })
  const page = await app.inject({ method: 'GET', url: '/api/v1/sparse/orders?fields=id&limit=1', headers: admin })
  t.match(page.json().page.next, /\/api\/v1\/sparse\/orders\?fields=id&limit=1&cursor=/, 'the next page is the same /sparse/ read')
})

t.test('the validator no longer relaxes fields= responses: what the contract does not describe is a violation', async (t) => {
  const check = (url: string, body: unknown) =>
    contractViolations({ method: 'GET', url, statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  t.not(check('/api/v1/orders/2', { id: 2 }).length, 0, 'the full read answers the full order: a sparse one there is a violation')
  t.same(check('/api/v1/sparse/orders/2?fields=id', { id: 2 }), [], 'a sparse order')
  t.not(check('/api/v1/sparse/orders/2?fields=id', {}).length, 0, 'an empty record is not a sparse order')
  t.not(check('/api/v1/sparse/orders/2?fields=id', { id: 'two' }).length, 0, 'a sparse field keeps its type')
  t.not(check('/api/v1/sparse/orders/2?fields=id', { id: 2, secret: 1 }).length, 0, 'no field the record does not have')
  t.not(
    check('/api/v1/sparse/orders?fields=id', { data: [{}], page: { next: null, cursor: null, total: 1 } }).length,
    0,
    'list items are full or sparse records, not empty',
  )
})
