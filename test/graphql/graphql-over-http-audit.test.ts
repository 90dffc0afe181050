/**
 * GraphQL over HTTP as its own test suite sees it (decisions §12): graphql-http's `serverAudits`
 * run against the real app on a real port, and every request-level problem is 400 BAD_REQUEST,
 * logged below error level, never INTERNAL_SERVER_ERROR.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { serverAudits } from 'graphql-http'
import { bearer, build, gql } from '../helper.ts'
import { captureLog } from '../log-capture.ts'

const grace = bearer(2, 'orders:read orders:write')

t.test('graphql-http serverAudits: no error and no warning except 86EE, which decisions §8 decide otherwise', async (t) => {
  const log = captureLog()
  const app = await build(t, { env: { LOG_LEVEL: 'info' }, loggerStream: log.stream })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const audits = serverAudits({
    url: `http://127.0.0.1:${port}/graphql`,
    // The endpoint needs a credential (decisions §2): every audit request carries a valid one.
    fetchFn: (input: string | URL | Request, init: RequestInit = {}) => {
      const headers = new Headers(init.headers)
      headers.set('authorization', grace.authorization)
      return fetch(input, { ...init, headers })
    },
  })
  t.ok(audits.length > 40, `the suite has its audits (${audits.length})`)
  const failing: Record<string, string> = {}
  for (const audit of audits) {
    const result = await audit.fn()
    if (result.status === 'error' || result.status === 'warn') failing[audit.id] = `${result.status}: ${audit.name}`
  }
  // 86EE: a variable that does not coerce is 422 under application/graphql-response+json (the
  // GraphQL-over-HTTP draft says 400); decisions §8 and §12 choose 422, with validation failures.
  t.same(Object.keys(failing), ['86EE'], JSON.stringify(failing))
  t.match(failing['86EE'], /^warn: SHOULD use a status code of 400 on variable coercion failure/)
  t.same(
    log.lines.filter((line) => line.level >= 50),
    [],
    'nothing the audit sent is logged at error level',
  )
})

const malformed: Array<{ name: string; headers?: Record<string, string>; payload: string }> = [
  { name: 'malformed JSON', payload: '{"query": "{ me { name } }"' },
  { name: 'no Content-Type', headers: { 'content-type': '' }, payload: '{"query": "{ me { name } }"}' },
  { name: 'a text/plain body', headers: { 'content-type': 'text/plain' }, payload: '{"query": "{ me { name } }"}' },
  { name: 'no query', payload: '{"variables": {}}' },
  { name: 'a numeric query', payload: '{"query": 1}' },
  { name: 'an object query', payload: '{"query": {"text": "{ me { name } }"}}' },
  { name: 'string variables', payload: '{"query": "{ me { name } }", "variables": "{}"}' },
  { name: 'array variables', payload: '{"query": "{ me { name } }", "variables": []}' },
  { name: 'a numeric operationName', payload: '{"query": "{ me { name } }", "operationName": 1}' },
  { name: 'string extensions', payload: '{"query": "{ me { name } }", "extensions": "x"}' },
  { name: 'a JSON array body', payload: '[{"query": "{ me { name } }"}]' },
  {
    name: '__proto__ in variables',
    payload: '{"query": "query ($id: ID!) { order(id: $id) { id } }", "variables": {"__proto__": {"id": "1"}}}',
  },
  {
    name: 'a wrong APQ hash',
    payload: JSON.stringify({
      query: '{ me { name } }',
      extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update('{ other }').digest('hex') } },
    }),
  },
  { name: 'a body over 1 MiB', payload: JSON.stringify({ query: `{ me { name } } #${'x'.repeat(1024 * 1024)}` }) },
]

t.test('request-level problems are 400 BAD_REQUEST in both media types, logged below error level', async (t) => {
  const log = captureLog()
  const app = await build(t, { env: { LOG_LEVEL: 'info' }, loggerStream: log.stream })
  for (const accept of ['application/json', 'application/graphql-response+json']) {
    for (const request of malformed) {
      const response = await app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { ...grace, accept, 'content-type': 'application/json', ...request.headers },
        payload: request.payload,
      })
      t.equal(response.statusCode, 400, `${request.name} (${accept}): 400`)
      const body = response.json() as { data?: unknown; errors: Array<{ extensions: { code: string } }> }
      t.same(
        body.errors.map((error) => error.extensions.code),
        ['BAD_REQUEST'],
        `${request.name} (${accept}): BAD_REQUEST`,
      )
      t.notOk('data' in body, `${request.name} (${accept}): no data, nothing executed`)
    }
  }
  t.same(
    log.lines.filter((line) => line.level >= 50),
    [],
    'none is logged at error level',
  )
  t.ok(
    log.lines.some((line) => line.level === 30 && line.msg === 'graphql request malformed'),
    'each is logged at info',
  )
})

t.test('"extensions": null is no extensions, in both media types', async (t) => {
  const app = await build(t)
  for (const accept of ['application/json', 'application/graphql-response+json']) {
    const response = await gql(
      app,
      { query: '{ me { name } }', extensions: null, variables: null, operationName: null },
      { ...grace, accept },
    )
    t.equal(response.statusCode, 200)
    t.same(response.json().data, { me: { name: 'Grace Hopper' } })
  }
})

t.test('an unknown APQ hash alone still asks for the query (not a malformed request)', async (t) => {
  const app = await build(t)
  const hash = createHash('sha256').update('{ me { id } }').digest('hex')
  const response = await gql(app, { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }, grace)
  t.equal(response.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_FOUND')
})
