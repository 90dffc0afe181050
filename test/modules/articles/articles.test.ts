import t from 'tap'
import { bearer, build } from '../../helper.ts'

const grace = bearer(2, 'articles:write')
const alan = bearer(3, 'articles:write')
const reader = bearer(4, '')

t.test('articles: create (201, Location), read by any valid token, list in envelope A', async (t) => {
  const app = await build(t)
  const created = await app.inject({ method: 'POST', url: '/api/v1/articles', headers: grace, payload: { title: 'Hello', body: 'World' } })
  t.equal(created.statusCode, 201)
  const article = created.json()
  t.match(article, { title: 'Hello', body: 'World', author_id: 2 })
  t.equal(created.headers.location, `http://localhost:80/api/v1/articles/${article.id}`)

  const fetched = await app.inject({ method: 'GET', url: `/api/v1/articles/${article.id}`, headers: reader })
  t.equal(fetched.statusCode, 200, 'a token without scopes may read')
  t.same(fetched.json(), article)
  t.equal(fetched.headers['cache-control'], 'private, no-cache')

  const list = await app.inject({ method: 'GET', url: '/api/v1/articles?limit=2', headers: reader })
  t.equal(list.statusCode, 200)
  t.equal(list.json().data[0].id, article.id, 'newest first')
  t.equal(list.json().page.total, 4)
  t.type(list.json().page.next, 'string')
  const titles = await app.inject({
    method: 'GET',
    url: '/api/v1/articles?sort=id&fields=id',
    headers: reader,
  })
  const ids = titles.json().data.map((a: { id: number }) => a.id)
  t.same(
    ids,
    [...ids].sort((a, b) => a - b),
  )
  t.same(Object.keys(titles.json().data[0]), ['id'])
})

t.test('articles: bounds are 400, writing needs articles:write, only the author or an admin edits', async (t) => {
  const app = await build(t)
  const tooLong = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: grace,
    payload: { title: 'x'.repeat(201), body: '' },
  })
  t.equal(tooLong.statusCode, 400)
  t.same(
    tooLong
      .json()
      .errors.map((e: { name: string }) => e.name)
      .sort(),
    ['/body', '/title'],
  )
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/articles', headers: reader, payload: { title: 'a', body: 'b' } })).statusCode,
    403,
  )

  const article = (
    await app.inject({ method: 'POST', url: '/api/v1/articles', headers: grace, payload: { title: 'Mine', body: 'Text' } })
  ).json()
  const url = `/api/v1/articles/${article.id}`
  t.equal((await app.inject({ method: 'PATCH', url, headers: alan, payload: { title: 'Stolen' } })).statusCode, 403)
  const patched = await app.inject({
    method: 'PATCH',
    url,
    headers: { ...grace, 'content-type': 'application/merge-patch+json' },
    payload: JSON.stringify({ title: 'Renamed' }),
  })
  t.equal(patched.statusCode, 200)
  t.equal(patched.json().title, 'Renamed')
  t.equal(patched.json().body, 'Text', 'a merge patch keeps what it does not name')
  const replaced = await app.inject({
    method: 'PUT',
    url,
    headers: { ...grace, 'if-match': patched.headers.etag as string },
    payload: { ...(patched.json() as object), title: 'Replaced', body: 'New' },
  })
  t.equal(replaced.statusCode, 200)
  t.equal((await app.inject({ method: 'PUT', url, headers: grace, payload: { title: 'No body' } })).statusCode, 400)
  t.equal((await app.inject({ method: 'DELETE', url, headers: { ...grace, 'if-match': patched.headers.etag as string } })).statusCode, 412)
  t.equal((await app.inject({ method: 'DELETE', url, headers: bearer(1, 'admin') })).statusCode, 204, 'an admin may delete')
  t.equal((await app.inject({ method: 'GET', url, headers: reader })).statusCode, 404)
})

t.test('comments: add, list oldest first in envelope B, 404 for a missing article', async (t) => {
  const app = await build(t)
  const url = '/api/v1/articles/1/comments'
  const before = (await app.inject({ method: 'GET', url, headers: reader })).json()
  t.same(Object.keys(before).sort(), ['data', 'next_cursor'])
  const added = await app.inject({ method: 'POST', url, headers: { ...alan, 'idempotency-key': 'c-1' }, payload: { body: 'Nice.' } })
  t.equal(added.statusCode, 201)
  t.match(added.json(), { article_id: 1, author_id: 3, body: 'Nice.' })
  const replay = await app.inject({ method: 'POST', url, headers: { ...alan, 'idempotency-key': 'c-1' }, payload: { body: 'Nice.' } })
  t.equal(replay.headers['idempotent-replayed'], 'true')
  const after = (await app.inject({ method: 'GET', url, headers: reader })).json()
  t.equal(after.data.length, before.data.length + 1, 'one comment, not two')
  t.equal(after.data.at(-1).id, added.json().id, 'oldest first')
  const paged = (await app.inject({ method: 'GET', url: `${url}?limit=1`, headers: reader })).json()
  t.equal(paged.data.length, 1)
  const second = (
    await app.inject({ method: 'GET', url: `${url}?limit=1&cursor=${encodeURIComponent(paged.next_cursor)}`, headers: reader })
  ).json()
  t.not(second.data[0].id, paged.data[0].id)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/articles/999/comments', headers: reader })).statusCode, 404)
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/articles/999/comments', headers: alan, payload: { body: 'x' } })).statusCode,
    404,
  )
  t.equal((await app.inject({ method: 'POST', url, headers: alan, payload: { body: '' } })).statusCode, 400)
})
