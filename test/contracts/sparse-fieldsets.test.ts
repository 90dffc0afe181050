/**
 * Sparse fieldsets on the reads themselves (the spec's rule 7; decisions §5, §16): each of the ten
 * reads the rule covers (the four top-level lists, the three nested ones, GET of one order, user
 * or article) takes an optional `fields` and answers exactly the fields it names: one, two or all
 * of them. An unknown name is 400 naming `fields`; a next page keeps `fields`; a 304 works with it;
 * a sparse answer carries an ETag of its own, never the full record's (decisions §6). Every answer
 * validates against openapi.yaml as it is (the helper checks each one; here it is asserted too).
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { contractViolations } from '../contract-validator.ts'
import { bearer, build } from '../helper.ts'

const admin = bearer(1, 'orders:read orders:write articles:write admin')

const ORDER = ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at']
const reads: Array<{ url: string; all: string[]; envelope?: 'A' | 'B' }> = [
  { url: '/api/v1/orders', all: ORDER, envelope: 'A' },
  { url: '/api/v1/articles', all: ['id', 'title', 'body', 'author_id', 'created_at', 'updated_at'], envelope: 'A' },
  { url: '/api/v1/users', all: ['id', 'name', 'company_id', 'created_at'], envelope: 'A' },
  { url: '/api/v1/products', all: ['sku', 'name', 'price'], envelope: 'A' },
  { url: '/api/v1/orders/3/items', all: ['sku', 'qty', 'unit_price'], envelope: 'B' },
  { url: '/api/v1/articles/1/comments', all: ['id', 'article_id', 'author_id', 'body', 'created_at'], envelope: 'B' },
  { url: '/api/v1/users/2/orders', all: ORDER, envelope: 'B' },
  { url: '/api/v1/orders/3', all: ORDER },
  { url: '/api/v1/users/2', all: ['id', 'name', 'company_id', 'created_at'] },
  { url: '/api/v1/articles/1', all: ['id', 'title', 'body', 'author_id', 'created_at', 'updated_at'] },
]

const withFields = (url: string, fields: string, more = '') => `${url}?fields=${fields}${more}`

async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers: { ...admin, ...headers } })
}

/** The records of an answer: a list's `data`, or the one record. */
function recordsOf(body: { data?: unknown[] }): Array<Record<string, unknown>> {
  return (Array.isArray(body.data) ? body.data : [body]) as Array<Record<string, unknown>>
}

t.test('every read answers exactly the fields named (one, two, all), valid against openapi.yaml, with an ETag of its own', async (t) => {
  const app = await build(t)
  for (const { url, all } of reads) {
    const full = await get(app, url)
    t.equal(full.statusCode, 200, url)
    const fullEtag = full.headers.etag
    for (const names of [[all[1]!], all.slice(0, 2), all]) {
      const sparseUrl = withFields(url, names.join(','))
      const response = await get(app, sparseUrl)
      t.equal(response.statusCode, 200, sparseUrl)
      t.match(response.headers['content-type'], /^application\/json; charset=utf-8$/)
      const records = recordsOf(response.json())
      t.ok(records.length > 0, `${sparseUrl}: records`)
      for (const record of records) t.same(Object.keys(record).sort(), [...names].sort(), `${sparseUrl}: exactly the fields named`)
      t.same(
        contractViolations({ method: 'GET', url: sparseUrl, statusCode: 200, headers: response.headers, body: response.body }),
        [],
        `${sparseUrl} matches the contract`,
      )
      t.match(response.headers.etag, /^"part\.[A-Za-z0-9_-]+"$/, `${sparseUrl}: a sparse answer's ETag`)
      t.not(response.headers.etag, fullEtag, `${sparseUrl}: never the full answer's ETag`)
    }
    // Every field named: the same records as the full read, and still not its ETag.
    const everyField = await get(app, withFields(url, all.join(',')))
    t.same(everyField.json(), full.json(), `${url}: every field named is the full answer`)
  }
})

t.test('an unknown field name is 400 naming fields, on every read, and reads nothing', async (t) => {
  const app = await build(t)
  for (const { url, all } of reads) {
    for (const fields of ['secret', `${all[0]},secret`, '', `${all[0]},`]) {
      const response = await get(app, withFields(url, fields))
      t.equal(response.statusCode, 400, withFields(url, fields))
      t.match(response.json(), { code: 'VALIDATION_FAILED', errors: [{ in: 'query', name: 'fields' }] })
    }
  }
})

t.test('a list read with fields pages on with fields: the next page is as sparse as the first', async (t) => {
  const app = await build(t)
  for (const { url, all, envelope } of reads.filter((read) => read.envelope !== undefined)) {
    const names = all.slice(0, 2)
    const first = await get(app, withFields(url, names.join(','), '&limit=1'))
    t.equal(first.statusCode, 200, url)
    const firstPage = first.json()
    let nextUrl: string
    if (envelope === 'A') {
      const next = new URL(firstPage.page.next)
      t.same(
        [next.pathname, next.searchParams.get('fields'), next.searchParams.get('limit')],
        [url, names.join(','), '1'],
        `${url}: page.next keeps fields`,
      )
      nextUrl = next.pathname + next.search
    } else {
      t.type(firstPage.next_cursor, 'string', `${url}: a next cursor`)
      nextUrl = withFields(url, names.join(','), `&limit=1&cursor=${encodeURIComponent(firstPage.next_cursor)}`)
    }
    const second = await get(app, nextUrl)
    t.equal(second.statusCode, 200, nextUrl)
    const [record] = recordsOf(second.json())
    t.same(Object.keys(record!).sort(), [...names].sort(), `${url}: the next page has the fields named`)
    t.notSame(record, recordsOf(firstPage)[0], `${url}: the next page is another record`)
    t.same(contractViolations({ method: 'GET', url: nextUrl, statusCode: 200, headers: second.headers, body: second.body }), [])
  }
})

t.test("a sparse answer is revalidated by its own ETag (304), which is no full answer's and no If-Match", async (t) => {
  const app = await build(t)
  for (const { url, all } of reads) {
    const sparseUrl = withFields(url, all.slice(0, 2).join(','))
    const sparse = await get(app, sparseUrl)
    const etag = sparse.headers.etag as string
    const again = await get(app, sparseUrl, { 'if-none-match': etag })
    t.equal(again.statusCode, 304, `${sparseUrl}: 304 with its ETag`)
    t.equal(again.body, '')
    t.equal(again.headers.etag, etag)
    const fullEtag = (await get(app, url)).headers.etag as string
    t.equal((await get(app, sparseUrl, { 'if-none-match': fullEtag })).statusCode, 200, `${sparseUrl}: the full ETag does not match`)
    t.equal((await get(app, url, { 'if-none-match': etag })).statusCode, 200, `${url}: the sparse ETag does not match the full read`)
  }

  // Every field named is the full record's bytes, and still its own ETag: a write conditioned on
  // it is refused, since the full record's ETag is what If-Match names (decisions §6).
  const partEtag = (await get(app, withFields('/api/v1/articles/1', reads[9]!.all.join(',')))).headers.etag as string
  const write = await app.inject({
    method: 'PATCH',
    url: '/api/v1/articles/1',
    headers: { ...admin, 'if-match': partEtag, 'content-type': 'application/merge-patch+json' },
    payload: { title: 'Changed' },
  })
  t.equal(write.statusCode, 412)
  t.equal((await get(app, '/api/v1/articles/1')).json().title, 'Designing idempotent APIs', 'nothing changed')

  // A change gives the part a new ETag, so a stale one is answered in full.
  const order = withFields('/api/v1/orders/3', 'items,total')
  const before = (await get(app, order)).headers.etag as string
  const replaced = await app.inject({
    method: 'PUT',
    url: '/api/v1/orders/3',
    headers: admin,
    payload: { items: [{ sku: 'MS-202', qty: 1 }] },
  })
  t.equal(replaced.statusCode, 200)
  const after = await get(app, order, { 'if-none-match': before })
  t.equal(after.statusCode, 200)
  t.same(after.json(), { total: 2900, items: [{ sku: 'MS-202', qty: 1, unit_price: 2900 }] })
})

t.test('the validator relaxes nothing for fields=: what the contract does not describe is a violation', async (t) => {
  const check = (url: string, body: unknown) =>
    contractViolations({ method: 'GET', url, statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
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
