/**
 * Request ids: a sent X-Request-Id that is short and plain is kept, anything else is
 * replaced by a generated one; either way it comes back in the X-Request-Id header of every
 * response (REST, GraphQL, errors), in a problem's `requestId`, in GraphQL's
 * `extensions.requestId`, and on every log line of the request.
 */
import t from 'tap'
import { bearer, build, gql } from '../helper.ts'
import { captureLog } from '../log-capture.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function setup(t: Parameters<typeof build>[0]) {
  const log = captureLog()
  const app = await build(t, { env: { LOG_LEVEL: 'info' }, loggerStream: log.stream })
  return { app, log }
}

t.test("a sent id round-trips on REST, GraphQL and an error, and is on the request's log lines", async (t) => {
  const { app, log } = await setup(t)
  const rest = await app.inject({
    method: 'GET',
    url: '/api/v1/users/2',
    headers: { ...bearer(2, 'orders:read'), 'x-request-id': 'rest-1' },
  })
  t.equal(rest.statusCode, 200)
  t.equal(rest.headers['x-request-id'], 'rest-1')

  const graphql = await gql(app, '{ me { name } }', { ...bearer(2, 'orders:read'), 'x-request-id': 'gql:2.b_C' })
  t.equal(graphql.statusCode, 200)
  t.equal(graphql.headers['x-request-id'], 'gql:2.b_C')
  t.equal(graphql.json().extensions.requestId, 'gql:2.b_C', 'in extensions.requestId')

  const missing = await app.inject({
    method: 'GET',
    url: '/api/v1/orders/999999',
    headers: { ...bearer(1, 'admin'), 'x-request-id': 'error-3' },
  })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers['x-request-id'], 'error-3')
  t.equal(missing.json().requestId, 'error-3', 'in the problem body')

  const badQuery = await gql(app, '{ nope }', { ...bearer(2, 'orders:read'), 'x-request-id': 'error-4' })
  t.equal(badQuery.headers['x-request-id'], 'error-4')
  t.equal(badQuery.json().extensions.requestId, 'error-4', 'a GraphQL error response carries it too')

  for (const id of ['rest-1', 'gql:2.b_C', 'error-3', 'error-4']) {
    const lines = log.lines.filter((line) => line.requestId === id)
    t.equal(lines.filter((line) => line.msg === 'request completed').length, 1, `one request line for ${id}`)
  }
  t.ok(
    log.lines.filter((line) => line.msg === 'request completed').every((line) => typeof line.requestId === 'string'),
    'every request line has a request id',
  )
})

t.test('without a sent id, one is generated, and it is the same in the header, the body and the log', async (t) => {
  const { app, log } = await setup(t)
  const responses = [
    await app.inject({ method: 'GET', url: '/api/v1/users/2', headers: bearer(2, 'orders:read') }),
    await gql(app, '{ me { name } }', bearer(2, 'orders:read')),
    await app.inject({ method: 'GET', url: '/no/such/path' }),
    await app.inject({ method: 'DELETE', url: '/api/v1/users' }),
    await gql(app, '{ me { name } }'),
  ]
  const ids = responses.map((response) => response.headers['x-request-id'] as string)
  for (const id of ids) t.match(id, UUID, 'a random UUID')
  t.equal(new Set(ids).size, ids.length, 'a different one for each request')
  t.equal(responses[1]!.json().extensions.requestId, ids[1], 'GraphQL extensions')
  t.equal(responses[2]!.statusCode, 404)
  t.equal(responses[2]!.json().requestId, ids[2], '404 problem')
  t.equal(responses[3]!.statusCode, 405)
  t.equal(responses[3]!.json().requestId, ids[3], '405 problem')
  t.equal(responses[4]!.statusCode, 401)
  t.equal(responses[4]!.json().extensions.requestId, ids[4], 'GraphQL 401')
  for (const id of ids)
    t.ok(
      log.lines.some((line) => line.requestId === id && line.msg === 'request completed'),
      `logged under ${id}`,
    )
})

t.test('a hostile id (too long, or with characters outside [A-Za-z0-9._:-]) is replaced, never echoed', async (t) => {
  const { app, log } = await setup(t)
  const hostile = ['a'.repeat(129), 'two words', '<script>', 'id;drop', 'é', '"quoted"', 'a/b', '']
  for (const id of hostile) {
    const response = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } })
    t.match(response.headers['x-request-id'], UUID, `${JSON.stringify(id.slice(0, 20))} is replaced`)
  }
  const longest = 'a'.repeat(128)
  t.equal(
    (await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': longest } })).headers['x-request-id'],
    longest,
    '128 characters are kept',
  )
  t.notOk(
    log.lines.some((line) => hostile.filter(Boolean).includes(String(line.requestId))),
    'no hostile id reaches the logs',
  )
})
