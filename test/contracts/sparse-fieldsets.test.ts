/**
 * Sparse fieldsets are described truthfully (decisions §12, §16): a `fields=` request asks for the
 * sparse media type with Accept and is answered in it, each record full or its `…Sparse` part as
 * openapi.yaml declares them; `application/json` is always the full records; `fields=` without that
 * Accept is 406 SPARSE_NOT_ACCEPTABLE. The contract validator checks every answer with no exception.
 * Every operation with a `fields` parameter is asked for one field, two, every field, and none.
 */
import t from 'tap'
import { contractViolations } from '../contract-validator.ts'
import { bearer, build } from '../helper.ts'

const admin = bearer(1, 'orders:read orders:write articles:write admin')
const SPARSE = 'application/vnd.contract-api.sparse+json'

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

t.test('every fields= answer validates against openapi.yaml as it is, with no relaxation', async (t) => {
  // The helper checks each response too; here the verdict is also asserted directly.
  const app = await build(t)
  for (const { url, all } of operations) {
    for (const fields of [undefined, all[1]!, all.slice(0, 2).join(','), all.join(',')]) {
      const full = fields === undefined ? url : `${url}?fields=${fields}`
      const response = await app.inject({ method: 'GET', url: full, headers: { ...admin, accept: SPARSE } })
      t.equal(response.statusCode, 200, full)
      t.match(
        response.headers['content-type'],
        fields === undefined ? /^application\/json;/ : /^application\/vnd\.contract-api\.sparse\+json;/,
      )
      if (fields !== undefined) t.match(response.headers.vary, /Accept/, 'a sparse answer varies on Accept')
      t.same(
        contractViolations({ method: 'GET', url: full, statusCode: 200, headers: response.headers, body: response.body }),
        [],
        `${full} matches the contract`,
      )
    }
  }
})

t.test('fields= without Accept naming the sparse media type is 406, whatever else Accept says', async (t) => {
  const app = await build(t)
  for (const accept of [undefined, '*/*', 'application/json', 'application/*', `${SPARSE};q=0, application/json`]) {
    const response = await app.inject({
      method: 'GET',
      url: '/api/v1/orders/2?fields=id',
      headers: { ...admin, ...(accept === undefined ? {} : { accept }) },
    })
    t.equal(response.statusCode, 406, `Accept: ${accept}`)
    t.equal(response.json().code, 'SPARSE_NOT_ACCEPTABLE')
  }
  const asked = await app.inject({
    method: 'GET',
    url: '/api/v1/orders?fields=id',
    headers: { ...admin, accept: `application/json, ${SPARSE}` },
  })
  t.equal(asked.statusCode, 200, 'named beside application/json: the sparse answer')
  t.same(Object.keys(asked.json().data[0]), ['id'])
  const plain = await app.inject({ method: 'GET', url: '/api/v1/orders/2', headers: { ...admin, accept: 'application/json' } })
  t.equal(plain.statusCode, 200)
  t.equal(plain.json().items.length > 0, true, 'without fields= the full order, in application/json')
})

t.test('the validator no longer relaxes fields= responses: what the contract does not describe is a violation', async (t) => {
  const headers = { 'content-type': SPARSE }
  const check = (url: string, body: unknown) =>
    contractViolations({ method: 'GET', url, statusCode: 200, headers, body: JSON.stringify(body) })
  const json = (url: string, body: unknown) =>
    contractViolations({ method: 'GET', url, statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  t.not(json('/api/v1/orders/2', { id: 2 }).length, 0, 'application/json is the full order: a sparse one there is a violation')
  t.same(check('/api/v1/orders/2?fields=id', { id: 2 }), [], 'a sparse order')
  t.not(check('/api/v1/orders/2?fields=id', {}).length, 0, 'an empty record is not a sparse order')
  t.not(check('/api/v1/orders/2?fields=id', { id: 'two' }).length, 0, 'a sparse field keeps its type')
  t.not(check('/api/v1/orders/2?fields=id', { id: 2, secret: 1 }).length, 0, 'no field the record does not have')
  t.not(
    check('/api/v1/orders?fields=id', { data: [{}], page: { next: null, cursor: null, total: 1 } }).length,
    0,
    'list items are full or sparse records, not empty',
  )
})
