/**
 * Request bodies are UTF-8 (decisions §13): bytes that are not are refused before anything is
 * parsed or stored, 400 MALFORMED_BODY on REST and 400 BAD_REQUEST on GraphQL, never stored as
 * U+FFFD. A U+FFFD the client did send is its text, and is kept.
 */
import t from 'tap'
import { bearer, build } from '../helper.ts'

const author = bearer(1, 'admin articles:write')
/** `before`, the bytes FF FE (never UTF-8), then `after`. */
const notUtf8Json = (before: string, after: string) => Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe]), Buffer.from(after)])

async function articleTitles(app: Awaited<ReturnType<typeof build>>): Promise<string[]> {
  return (await app.db.selectFrom('articles').select('title').orderBy('id').execute()).map((row) => row.title)
}

t.test('REST: a JSON body that is not UTF-8 is 400 MALFORMED_BODY and nothing is stored', async (t) => {
  const app = await build(t)
  const before = await articleTitles(app)
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: { ...author, 'content-type': 'application/json' },
    payload: notUtf8Json('{"title":"a', 'b","body":"text"}'),
  })
  t.equal(created.statusCode, 400)
  t.match(created.headers['content-type'], /^application\/problem\+json/)
  t.match(created.json(), { status: 400, code: 'MALFORMED_BODY', detail: 'The body is not valid UTF-8 text.' })

  // A merge patch is read the same way; a lone continuation byte (0x80) is no UTF-8 either.
  const patched = await app.inject({
    method: 'PATCH',
    url: '/api/v1/articles/1',
    headers: { ...author, 'content-type': 'application/merge-patch+json' },
    payload: Buffer.concat([Buffer.from('{"title":"x'), Buffer.from([0x80]), Buffer.from('"}')]),
  })
  t.equal(patched.statusCode, 400)
  t.equal(patched.json().code, 'MALFORMED_BODY')
  t.same(await articleTitles(app), before, 'nothing was created or changed')
  t.notOk(
    (await articleTitles(app)).some((title) => title.includes('\uFFFD')),
    'no U+FFFD was stored',
  )
})

t.test('REST: a U+FFFD the client sent (its UTF-8 bytes EF BF BD) is text like any other, and kept', async (t) => {
  const app = await build(t)
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: { ...author, 'content-type': 'application/json' },
    payload: Buffer.from(JSON.stringify({ title: 'a\uFFFDb', body: 'text' }), 'utf8'),
  })
  t.equal(created.statusCode, 201)
  t.equal(created.json().title, 'a\uFFFDb')
})

t.test('GraphQL: a POST body that is not UTF-8, JSON or a bare document, is 400 BAD_REQUEST and nothing is stored', async (t) => {
  const app = await build(t)
  const before = await articleTitles(app)
  const mutation = (title: string) => `mutation { createArticle(input: {title: "${title}", body: "text"}) { id title } }`
  const [jsonStart, jsonEnd] = JSON.stringify({ query: mutation('a%sb') }).split('%s') as [string, string]
  const [start, end] = mutation('a%sb').split('%s') as [string, string]
  for (const [contentType, payload] of [
    ['application/json', notUtf8Json(jsonStart, jsonEnd)],
    // A truncated two-byte sequence (C3 with nothing after it) in an application/graphql document.
    ['application/graphql', Buffer.concat([Buffer.from(start), Buffer.from([0xc3]), Buffer.from(end)])],
  ] as const) {
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const response = await app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { ...author, 'content-type': contentType, accept },
        payload,
      })
      t.equal(response.statusCode, 400, `${contentType}, Accept: ${accept}`)
      t.match(response.json(), {
        errors: [{ message: 'The body is not valid UTF-8 text.', extensions: { code: 'BAD_REQUEST', reason: 'MALFORMED_BODY' } }],
      })
      t.notOk('data' in response.json(), 'no data: nothing executed')
    }
  }
  t.same(await articleTitles(app), before, 'nothing was created')

  // The same bodies in UTF-8 are executed.
  const valid = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...author, 'content-type': 'application/graphql' },
    payload: Buffer.from(mutation('caf\u00e9')),
  })
  t.equal(valid.statusCode, 200)
  t.equal(valid.json().data.createArticle.title, 'caf\u00e9')
})
