/**
 * CORS (decisions §12): off unless CORS_ORIGINS is set; then preflights are 204 without a token,
 * and every response to an allowed origin (problems included) carries Access-Control-Allow-Origin
 * with that origin and exposes the headers a browser app reads. A disallowed origin gets no ACAO,
 * and its WebSocket upgrade on /graphql is refused with 403.
 */
import t from 'tap'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import WebSocket from 'ws'
import { bearer, build, createOrder, gql, tokenFor } from '../helper.ts'

const APP_ORIGIN = 'https://app.example.com'
const OTHER_ORIGIN = 'https://evil.example.net'
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'Last-Event-ID',
  'Mcp-Protocol-Version',
  'X-Request-Id',
  'traceparent',
  'tracestate',
]
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'Server-Timing',
  'ETag',
  'Location',
  'Idempotent-Replayed',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  'WWW-Authenticate',
]
const list = (header: unknown) =>
  String(header ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
const preflight = (url: string, origin = APP_ORIGIN, method = 'POST', requestHeaders = 'authorization, content-type, idempotency-key') => ({
  method: 'OPTIONS' as const,
  url,
  headers: {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': requestHeaders,
  },
})

t.test('CORS is off by default: no CORS headers, and OPTIONS is the 405 it always was', async (t) => {
  const app = await build(t)
  const asked = await app.inject(preflight('/api/v1/orders'))
  t.equal(asked.statusCode, 405, 'a preflight is just an OPTIONS the path does not have')
  t.equal(asked.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.equal(asked.headers.allow, 'GET, HEAD, POST')
  t.notOk(asked.headers['access-control-allow-origin'])
  t.notOk(asked.headers['access-control-allow-methods'])
  const plain = await app.inject({ method: 'OPTIONS', url: '/api/v1/orders' })
  t.equal(plain.statusCode, 405)
  const read = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { origin: APP_ORIGIN, ...bearer(2) } })
  t.equal(read.statusCode, 200)
  t.notOk(read.headers['access-control-allow-origin'], 'no ACAO')
  t.notOk(read.headers['access-control-expose-headers'], 'nothing exposed')
  t.notMatch(String(read.headers.vary), /Origin/, 'responses do not vary on Origin')
})

t.test('a preflight from an allowed origin is 204 with the allowed and exposed headers, and needs no token', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: `${APP_ORIGIN}, http://localhost:5173` }, uncheckedResponses: true })
  for (const url of ['/api/v1/orders', '/api/v1/orders/3', '/graphql', '/api/v1/openapi.json']) {
    const response = await app.inject(preflight(url))
    t.equal(response.statusCode, 204, `${url}: 204`)
    t.equal(response.body, '', `${url}: no body`)
    t.equal(response.headers['access-control-allow-origin'], APP_ORIGIN, `${url}: the matching origin`)
    t.same(list(response.headers['access-control-allow-headers']), ALLOWED_HEADERS, `${url}: allowed headers`)
    t.same(list(response.headers['access-control-expose-headers']), EXPOSED_HEADERS, `${url}: exposed headers`)
    t.same(list(response.headers['access-control-allow-methods']), ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], `${url}: methods`)
    t.ok(Number(response.headers['access-control-max-age']) > 0, `${url}: the answer may be cached`)
    t.notOk(response.headers['access-control-allow-credentials'], `${url}: no credentials mode (the token is a header)`)
    t.ok(list(response.headers.vary).includes('Origin'), `${url}: Vary: Origin`)
    t.equal(response.headers['x-content-type-options'], 'nosniff', `${url}: still helmet's headers`)
  }
  const second = await app.inject(preflight('/api/v1/orders', 'http://localhost:5173', 'PATCH'))
  t.equal(second.headers['access-control-allow-origin'], 'http://localhost:5173', 'each listed origin is answered with itself')
})

t.test('preflights are not rate limited and do not spend the budget', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN, RATE_LIMIT_MAX: '2' }, uncheckedResponses: true })
  for (let i = 0; i < 5; i++) t.equal((await app.inject(preflight('/api/v1/orders'))).statusCode, 204, `preflight ${i + 1}`)
  const read = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { origin: APP_ORIGIN } })
  t.equal(read.statusCode, 401, 'the first real request is not refused for the preflights')
  t.match(read.headers.ratelimit, /^"default";r=1;t=\d+$/, 'and the preflights took nothing from the budget')
})

t.test('the legacy RateLimit fields are exposed only when they are sent (RATE_LIMIT_LEGACY_HEADERS=true)', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN, RATE_LIMIT_LEGACY_HEADERS: 'true' }, uncheckedResponses: true })
  const asked = await app.inject(preflight('/api/v1/orders'))
  t.same(list(asked.headers['access-control-expose-headers']), [
    ...EXPOSED_HEADERS,
    'RateLimit-Limit',
    'RateLimit-Remaining',
    'RateLimit-Reset',
  ])
  const read = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { origin: APP_ORIGIN, ...bearer(2) } })
  t.match(read.headers['ratelimit-remaining'], /^\d+$/, 'and they are sent')
})

t.test('a disallowed origin gets no Access-Control-Allow-Origin, on a preflight or a request', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN }, uncheckedResponses: true })
  const asked = await app.inject(preflight('/api/v1/orders', OTHER_ORIGIN))
  t.notOk(asked.headers['access-control-allow-origin'], 'preflight: no ACAO, so the browser refuses')
  const read = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { origin: OTHER_ORIGIN, ...bearer(2) } })
  t.equal(read.statusCode, 200, 'the server still answers (CORS is enforced by the browser)')
  t.notOk(read.headers['access-control-allow-origin'], 'request: no ACAO')
  t.ok(list(read.headers.vary).includes('Origin'), 'Vary: Origin, so a cache does not hand this answer to the allowed origin')
  const noOrigin = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(2) })
  t.notOk(noOrigin.headers['access-control-allow-origin'], 'a request without Origin (curl, server to server) gets none')
})

t.test('an OPTIONS that is no preflight is the same 405 or 404 problem with CORS on', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN } })
  const known = await app.inject({ method: 'OPTIONS', url: '/api/v1/orders' })
  t.equal(known.statusCode, 405)
  t.equal(known.headers.allow, 'GET, HEAD, POST', 'Allow lists the path’s own methods, not OPTIONS')
  t.equal(known.headers['content-type'], 'application/problem+json; charset=utf-8')
  const unknown = await app.inject({ method: 'OPTIONS', url: '/api/v1/nowhere' })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'NOT_FOUND')
  const originOnly = await app.inject({ method: 'OPTIONS', url: '/api/v1/orders', headers: { origin: APP_ORIGIN } })
  t.equal(originOnly.statusCode, 405, 'Origin without Access-Control-Request-Method is no preflight either')
})

t.test('responses to an allowed origin carry ACAO and expose the headers: REST 201, GraphQL, the contract, problems', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN } })
  const origin = { origin: APP_ORIGIN }
  const created = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], { ...origin, ...bearer(2), 'idempotency-key': 'cors-1' })
  const replayed = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], { ...origin, ...bearer(2), 'idempotency-key': 'cors-1' })
  const responses = {
    'REST 201': created,
    'REST replay': replayed,
    'REST list': await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { ...origin, ...bearer(2) } }),
    GraphQL: await gql(app, '{ me { id } }', { ...origin, ...bearer(2) }),
    'GraphQL 401': await gql(app, '{ me { id } }', origin),
    'openapi.json': await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: origin }),
    'openapi.yaml': await app.inject({ method: 'GET', url: '/api/v1/openapi.yaml', headers: origin }),
    'schema.graphql': await app.inject({ method: 'GET', url: '/graphql/schema.graphql', headers: origin }),
    'problem 401': await app.inject({ method: 'GET', url: '/api/v1/orders', headers: origin }),
    'problem 404': await app.inject({ method: 'GET', url: '/api/v1/orders/999999', headers: { ...origin, ...bearer(2) } }),
    'problem 404 (no route)': await app.inject({ method: 'GET', url: '/api/v1/nowhere', headers: { ...origin, ...bearer(2) } }),
    'problem 400': await app.inject({ method: 'GET', url: '/api/v1/orders/03', headers: { ...origin, ...bearer(2) } }),
  }
  t.equal(created.statusCode, 201)
  t.match(created.headers.location, /\/api\/v1\/orders\/\d+$/, 'the 201 has a Location')
  t.ok(created.headers.etag, 'and an ETag')
  t.equal(replayed.headers['idempotent-replayed'], 'true')
  t.equal(responses.GraphQL.statusCode, 200)
  t.equal(responses['GraphQL 401'].statusCode, 401)
  t.equal(responses['openapi.json'].statusCode, 200)
  t.equal(responses['problem 401'].statusCode, 401)
  t.equal(responses['problem 404'].statusCode, 404)
  t.equal(responses['problem 404 (no route)'].statusCode, 404)
  t.equal(responses['problem 400'].statusCode, 400)
  for (const [name, response] of Object.entries(responses)) {
    t.equal(response.headers['access-control-allow-origin'], APP_ORIGIN, `${name}: ACAO is the caller's origin`)
    t.same(list(response.headers['access-control-expose-headers']), EXPOSED_HEADERS, `${name}: the exposed headers`)
    t.ok(list(response.headers.vary).includes('Origin'), `${name}: Vary: Origin`)
  }
  t.same(list(responses['REST list'].headers.vary), ['Origin', 'Authorization'], 'a cacheable answer varies on both')
  t.equal(responses['problem 401'].headers['content-type'], 'application/problem+json; charset=utf-8', 'the problem is still problem+json')
  t.ok(responses['problem 401'].headers['www-authenticate'], 'and still says how to authenticate')
})

t.test('CORS_ORIGINS=* answers any origin with that origin', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: '*' }, uncheckedResponses: true })
  for (const origin of [APP_ORIGIN, OTHER_ORIGIN, 'http://localhost:8080']) {
    const asked = await app.inject(preflight('/graphql', origin))
    t.equal(asked.statusCode, 204)
    t.equal(asked.headers['access-control-allow-origin'], origin, `preflight from ${origin}`)
    const read = await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { origin } })
    t.equal(read.headers['access-control-allow-origin'], origin, `request from ${origin}`)
    t.ok(list(read.headers.vary).includes('Origin'))
  }
})

t.test('a 429 to an allowed origin carries ACAO, so the browser app can read its Retry-After', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN, RATE_LIMIT_MAX: '1' } })
  const headers = { origin: APP_ORIGIN, ...bearer(2) }
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders', headers })).statusCode, 200)
  const refused = await app.inject({ method: 'GET', url: '/api/v1/orders', headers })
  t.equal(refused.statusCode, 429)
  t.equal(refused.headers['access-control-allow-origin'], APP_ORIGIN)
  t.ok(list(refused.headers['access-control-expose-headers']).includes('Retry-After'), 'Retry-After is exposed')
  t.ok(refused.headers['retry-after'], 'and sent')
})

t.test(
  'a request id and trace context sent by a browser app pass the preflight, and the answer exposes X-Request-Id and Server-Timing',
  async (t) => {
    const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN } })
    const asked = await app.inject(preflight('/api/v1/orders', APP_ORIGIN, 'GET', 'authorization, x-request-id, traceparent, tracestate'))
    t.equal(asked.statusCode, 204)
    const allowed = list(asked.headers['access-control-allow-headers']).map((name) => name.toLowerCase())
    for (const name of ['authorization', 'x-request-id', 'traceparent', 'tracestate']) t.ok(allowed.includes(name), `${name} is allowed`)
    const requestId = 'browser-trace-1'
    const read = await app.inject({
      method: 'GET',
      url: '/api/v1/orders',
      headers: {
        origin: APP_ORIGIN,
        ...bearer(2),
        'x-request-id': requestId,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
    })
    t.equal(read.statusCode, 200)
    t.equal(read.headers['x-request-id'], requestId, 'the request id sent is the one answered')
    t.ok(read.headers['server-timing'], 'Server-Timing is sent')
    const exposed = list(read.headers['access-control-expose-headers'])
    t.ok(exposed.includes('X-Request-Id') && exposed.includes('Server-Timing'), 'and both are exposed to the script')
  },
)

t.test('an MCP client in a page on an allowed origin passes the preflight to /mcp and can read a 401 challenge', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN } })
  const asked = await app.inject(preflight('/mcp', APP_ORIGIN, 'POST', 'authorization, content-type, mcp-protocol-version'))
  t.equal(asked.statusCode, 204)
  const allowed = list(asked.headers['access-control-allow-headers']).map((name) => name.toLowerCase())
  t.ok(allowed.includes('mcp-protocol-version'), 'Mcp-Protocol-Version, which an MCP client sends after its initialize, is allowed')
  const refused = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { origin: APP_ORIGIN, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers['access-control-allow-origin'], APP_ORIGIN)
  t.match(refused.headers['www-authenticate'], /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"/)
  t.ok(list(refused.headers['access-control-expose-headers']).includes('WWW-Authenticate'), 'and the page may read the challenge')
})

/** Opens a WebSocket to /graphql with `origin` (none when undefined): the upgrade's status, 101 when it opened. */
async function upgrade(url: string, origin: string | undefined): Promise<{ status: number; body: string }> {
  const socket = new WebSocket(url, 'graphql-transport-ws', origin === undefined ? {} : { origin })
  const outcome = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    socket.once('open', () => resolve({ status: 101, body: '' }))
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    socket.once('error', reject)
  })
  if (socket.readyState === WebSocket.OPEN) {
    socket.close()
    await once(socket, 'close')
  } else socket.terminate()
  return outcome
}

t.test(
  'with CORS_ORIGINS set, a WebSocket upgrade from another origin is refused with 403; listed, same-origin and Origin-less clients connect',
  async (t) => {
    const app = await build(t, { env: { CORS_ORIGINS: APP_ORIGIN } })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const host = `127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const url = `ws://${host}/graphql`
    const refused = await upgrade(url, OTHER_ORIGIN)
    t.equal(refused.status, 403, 'another origin: 403')
    const body = JSON.parse(refused.body) as { errors: Array<{ message: string; extensions: { code: string } }> }
    t.equal(body.errors[0]?.extensions.code, 'FORBIDDEN', 'with the GraphQL error code')
    t.match(body.errors[0]?.message, /origin https:\/\/evil\.example\.net/, 'naming the origin')
    t.equal((await upgrade(url, APP_ORIGIN)).status, 101, 'a listed origin connects')
    t.equal((await upgrade(url, `http://${host}`)).status, 101, "the service's own origin (GraphiQL) connects")
    t.equal((await upgrade(url, undefined)).status, 101, 'a client that sends no Origin (no browser) connects')

    // And a connection from a listed origin works end to end: connection_init is acknowledged.
    const socket = new WebSocket(url, 'graphql-transport-ws', { origin: APP_ORIGIN })
    t.teardown(() => socket.terminate())
    await once(socket, 'open')
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${tokenFor(2)}` } }))
    const [ack] = await once(socket, 'message')
    t.equal(JSON.parse(String(ack)).type, 'connection_ack')
  },
)

t.test('without CORS_ORIGINS, or with *, a WebSocket upgrade from any origin connects (as before)', async (t) => {
  const envs: Array<Record<string, string>> = [{}, { CORS_ORIGINS: '*' }]
  for (const env of envs) {
    const app = await build(t, { env })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const url = `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/graphql`
    t.equal((await upgrade(url, OTHER_ORIGIN)).status, 101, `CORS_ORIGINS=${env.CORS_ORIGINS ?? '(unset)'}: any origin connects`)
  }
})
