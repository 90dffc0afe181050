/**
 * /graphql as a person meets it (decisions §13, "Front doors"): a browser tab (a GET for HTML with
 * no query) is sent to GraphiQL, before any credential is asked for; a GET with no query from
 * anything else is told that the query is missing (400 BAD_REQUEST), not PERSISTED_QUERY_NOT_FOUND.
 * GraphiQL is not served in production, so there the tab gets the GraphQL answer.
 */
import t from 'tap'
import { bearer, build } from '../helper.ts'

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'

t.test('a browser tab on GET /graphql is redirected to GraphiQL, with or without a credential', async (t) => {
  const app = await build(t)
  for (const headers of [{ accept: HTML }, { accept: HTML, ...bearer(2) }]) {
    const response = await app.inject({ method: 'GET', url: '/graphql', headers })
    t.equal(response.statusCode, 302)
    t.equal(response.headers.location, '/graphiql')
  }
  const page = await app.inject({ method: 'GET', url: '/graphiql', headers: { accept: HTML } })
  t.equal(page.statusCode, 200, 'where GraphiQL is')
})

t.test('a GET with a query from a browser still runs it (the redirect is for a bare /graphql only)', async (t) => {
  const app = await build(t)
  const response = await app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent('{ me { name } }')}`,
    headers: { accept: HTML, ...bearer(2) },
  })
  t.equal(response.statusCode, 200)
  t.same(response.json().data, { me: { name: 'Grace Hopper' } })
})

t.test('GET /graphql without a query is 400 BAD_REQUEST saying the query is missing', async (t) => {
  const app = await build(t)
  for (const accept of ['application/json', 'application/graphql-response+json', '*/*']) {
    const response = await app.inject({ method: 'GET', url: '/graphql', headers: { accept, ...bearer(2) } })
    t.equal(response.statusCode, 400, accept)
    const [error] = response.json().errors
    t.equal(error.extensions.code, 'BAD_REQUEST')
    t.match(error.message, /no "query" parameter/)
  }
  // A persisted query's hash alone is still a request (and still asks for the query when unknown).
  const hashOnly = await app.inject({
    method: 'GET',
    url: `/graphql?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } }))}`,
    headers: bearer(2),
  })
  t.equal(hashOnly.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_FOUND')
})

t.test('without GraphiQL (production) a browser tab gets the GraphQL answer', async (t) => {
  const app = await build(t, { env: { NODE_ENV: 'production' } })
  const response = await app.inject({ method: 'GET', url: '/graphql', headers: { accept: HTML, ...bearer(2) } })
  t.equal(response.statusCode, 400)
  t.match(response.json().errors[0].message, /no "query" parameter/)
})
