/**
 * Conditional requests compare entity tags as RFC 9110 says: If-None-Match weakly (§13.1.2), so a
 * cache that holds `W/"x"` (a proxy may weaken a tag it compressed) gets its 304, and If-Match
 * strongly (§13.1.1), so a write never applies to a version that is merely equivalent.
 */
import t from 'tap'
import { bearer, build } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write articles:write')
const admin = bearer(1, 'admin')

t.test('If-None-Match: W/"…" of the current ETag is 304, like the strong tag, on records, lists and the contract', async (t) => {
  const app = await build(t)
  for (const url of ['/api/v1/orders/3', '/api/v1/orders', '/api/v1/articles/1/comments', '/api/v1/openapi.json']) {
    const first = await app.inject({ method: 'GET', url, headers: grace })
    t.equal(first.statusCode, 200, url)
    const etag = first.headers.etag as string
    t.match(etag, /^"/, `${url}: a strong ETag`)
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", W/${etag}`, ` W/${etag} `, '*']) {
      const revalidated = await app.inject({ method: 'GET', url, headers: { ...grace, 'if-none-match': ifNoneMatch } })
      t.equal(revalidated.statusCode, 304, `${url}, If-None-Match: ${ifNoneMatch}`)
      t.equal(revalidated.body, '')
      t.equal(revalidated.headers.etag, etag)
    }
    for (const ifNoneMatch of ['"other"', 'W/"other"', etag.replace(/"$/, 'x"')]) {
      const changed = await app.inject({ method: 'GET', url, headers: { ...grace, 'if-none-match': ifNoneMatch } })
      t.equal(changed.statusCode, 200, `${url}, If-None-Match: ${ifNoneMatch} names another version`)
    }
  }
})

t.test('If-Match keeps the strong comparison: W/"…" of the current ETag is 412 and nothing changes', async (t) => {
  const app = await build(t)
  const etag = (await app.inject({ method: 'GET', url: '/api/v1/articles/1', headers: admin })).headers.etag as string
  const weak = await app.inject({
    method: 'PATCH',
    url: '/api/v1/articles/1',
    headers: { ...admin, 'if-match': `W/${etag}` },
    payload: { title: 'Weakly matched' },
  })
  t.equal(weak.statusCode, 412)
  t.equal(weak.json().code, 'PRECONDITION_FAILED')
  const strong = await app.inject({
    method: 'PATCH',
    url: '/api/v1/articles/1',
    headers: { ...admin, 'if-match': etag },
    payload: { title: 'Strongly matched' },
  })
  t.equal(strong.statusCode, 200)
  t.equal(strong.json().title, 'Strongly matched')
})
