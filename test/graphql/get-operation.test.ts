/**
 * A GET whose document names no operation graphql could run is answered like the same document
 * over POST, never with INTERNAL_SERVER_ERROR (decisions §12: nothing a client sends maps to 5xx).
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { bearer, build, gql } from '../helper.ts'

const TWO = 'query A { me { id } } query B { me { name } }'
const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

for (const accept of ['application/json', 'application/graphql-response+json']) {
  t.test(`${accept}: GET with a missing or unknown operationName gets graphql's own answer, as over POST`, async (t) => {
    const app = await build(t)
    const headers = { ...bearer(2, 'orders:read'), accept }
    for (const operationName of [undefined, 'Nope', '']) {
      const post = await gql(app, { query: TWO, ...(operationName === undefined ? {} : { operationName }) }, headers)
      const query = new URLSearchParams({ query: TWO, ...(operationName === undefined ? {} : { operationName }) })
      const get = await app.inject({ method: 'GET', url: `/graphql?${query}`, headers })
      t.ok(post.statusCode < 500, `POST with operationName ${JSON.stringify(operationName)} is not a server error (${post.statusCode})`)
      t.equal(get.statusCode, post.statusCode, `GET answers with POST's status for operationName ${JSON.stringify(operationName)}`)
      t.same(get.json().errors, post.json().errors, 'and the same errors')
      t.notOk(JSON.stringify(get.json()).includes('INTERNAL_SERVER_ERROR'))
    }

    // A hash-only GET runs the stored document with the request's operationName.
    const stored = await gql(
      app,
      { query: TWO, operationName: 'A', extensions: { persistedQuery: { version: 1, sha256Hash: hash(TWO) } } },
      headers,
    )
    t.equal(stored.statusCode, 200, 'the document is stored by automatic persisted queries')
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash(TWO) } })
    const unknown = await app.inject({
      method: 'GET',
      url: `/graphql?${new URLSearchParams({ extensions, operationName: 'Nope' })}`,
      headers,
    })
    t.ok(unknown.statusCode < 500, `a persisted GET naming no operation is not a server error (${unknown.statusCode})`)
    t.match(unknown.json().errors, [{ message: 'Unknown operation named "Nope".' }])
    const named = await app.inject({ method: 'GET', url: `/graphql?${new URLSearchParams({ extensions, operationName: 'B' })}`, headers })
    t.equal(named.statusCode, 200)
    t.same(named.json().data, { me: { name: 'Grace Hopper' } }, 'the named operation runs')

    const repeated = await app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent(TWO)}&operationName=A&operationName=B`,
      headers,
    })
    t.ok(repeated.statusCode < 500, `a repeated operationName is not a server error (${repeated.statusCode})`)
    t.match(repeated.json().errors, [{ message: 'operationName must be one string.' }])
  })
}

t.test('a subscription sent over HTTP is refused as not executable, never INTERNAL_SERVER_ERROR', async (t) => {
  const app = await build(t)
  for (const accept of ['application/json', 'application/graphql-response+json']) {
    const response = await gql(app, 'subscription { orderCreated { id } }', { ...bearer(1, 'admin'), accept })
    t.equal(response.statusCode, accept === 'application/json' ? 200 : 422, accept)
    t.match(response.json().errors, [{ message: /served over WebSocket/, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }])
    t.notOk(response.body.includes('INTERNAL_SERVER_ERROR'))
  }
})
