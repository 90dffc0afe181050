/**
 * Answers sent before any route is chosen carry what every answer carries (decisions §12): a
 * problem+json body with a catalogue code, X-Request-Id (also the body's requestId) and the
 * security headers. Router errors (a 2,000-digit id: 414; `%zz` in a path: 400) have a caller, so
 * they are rate limited and carry the RateLimit fields; their `instance` is never escaped again.
 * Node's own refusals (a malformed request, headers too large, a request too slow) have none: they
 * carry no RateLimit fields, and the connection is closed. Driven through raw sockets on a
 * listening instance, as the misbehaving client would.
 */
import t, { type Test } from 'tap'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { bearer, build } from '../helper.ts'

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
  /** Whether the server closed the connection after answering. */
  closed: boolean
}

/** Far longer than the headers timeout below plus Node's 1 s checking interval. */
const DEADLINE_MS = 10_000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

async function listeningApp(t: Test, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const app = await build(t, { env: { HTTP_HEADERS_TIMEOUT: '300ms', ...env } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return app
}

/** Sends `request` as raw bytes and reads one answer; the socket is closed by then or after it. */
async function send(t: Test, app: FastifyInstance, request: string): Promise<RawAnswer> {
  const { port } = app.server.address() as AddressInfo
  const socket = connect({ host: '127.0.0.1', port })
  t.teardown(() => socket.destroy())
  socket.on('error', () => {})
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  const closed = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), DEADLINE_MS)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  socket.write(request)
  const wasClosed = await closed
  const text = Buffer.concat(chunks).toString('utf8')
  const [head = '', ...rest] = text.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), closed: wasClosed }
}

const get = (path: string, headers: Record<string, string> = {}) =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries({ ...headers, connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`

/** The headers every answer carries, as a routed answer shows them. */
function assertCarriesTheCommonHeaders(t: Test, answer: RawAnswer, what: string) {
  t.match(answer.headers['content-type'], /^application\/problem\+json/, `${what}: problem+json`)
  const body = JSON.parse(answer.body) as { requestId?: string; status?: number; code?: string }
  t.ok(answer.headers['x-request-id'], `${what}: X-Request-Id`)
  t.equal(body.requestId, answer.headers['x-request-id'], `${what}: the body's requestId is the header's`)
  t.equal(body.status, answer.status, `${what}: the body's status`)
  t.equal(answer.headers['x-content-type-options'], 'nosniff', `${what}: X-Content-Type-Options`)
  // The API's lean set (decisions §13): no HSTS without an https PUBLIC_URL, no helmet page headers.
  t.equal(answer.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", `${what}: Content-Security-Policy`)
  t.equal(answer.headers['x-frame-options'], undefined, `${what}: no page headers on an API answer`)
}

t.test(
  "Node's own 400, 408 and 431 are problem+json with X-Request-Id and the security headers, no RateLimit fields, and close",
  async (t) => {
    const app = await listeningApp(t)
    const ids = new Set<string>()
    for (const { what, request, status, problem } of [
      {
        what: 'a malformed header',
        request: 'GET /api/v1/orders HTTP/1.1\r\nHost: localhost\r\nNot a header\r\n\r\n',
        status: 400,
        problem: { code: 'MALFORMED_REQUEST', type: '/problems/bad-request' },
      },
      {
        what: 'headers too large',
        request: get('/api/v1/orders', { 'x-padding': 'a'.repeat(20_000) }),
        status: 431,
        problem: { code: 'HEADERS_TOO_LARGE', type: '/problems/headers-too-large', title: 'Request Header Fields Too Large' },
      },
      {
        what: 'headers that never finish',
        request: 'GET /api/v1/orders HTTP/1.1\r\nHost: localhost\r\n',
        status: 408,
        problem: { code: 'REQUEST_TIMEOUT', type: '/problems/request-timeout' },
      },
    ]) {
      const answer = await send(t, app, request)
      t.equal(answer.status, status, what)
      assertCarriesTheCommonHeaders(t, answer, what)
      const body = JSON.parse(answer.body)
      t.match(body, problem, `${what}: its problem`)
      t.notOk('instance' in body, `${what}: no instance, the request target was never read`)
      t.match(answer.headers['x-request-id'], UUID, `${what}: an id of the service's`)
      ids.add(answer.headers['x-request-id']!)
      t.equal(answer.headers.connection, 'close', `${what}: Connection: close`)
      t.ok(answer.closed, `${what}: the connection is closed`)
      t.equal(answer.headers.ratelimit, undefined, `${what}: no RateLimit fields, no caller was read`)
      t.equal(answer.headers['content-length'], String(Buffer.byteLength(answer.body)), `${what}: Content-Length is the body's`)
    }
    t.equal(ids.size, 3, 'each answer its own id')
  },
)

t.test('the 414 of a 2,000-digit id carries every header a routed answer does, and is rate limited', async (t) => {
  const app = await listeningApp(t, { RATE_LIMIT_MAX: '2' })
  const { authorization } = bearer(2, 'orders:read')
  const path = `/api/v1/orders/${'1'.repeat(2000)}`
  const tooLong = await send(t, app, get(path, { authorization, 'x-request-id': 'client-chosen-1' }))
  t.equal(tooLong.status, 414)
  assertCarriesTheCommonHeaders(t, tooLong, '414')
  t.match(JSON.parse(tooLong.body), { code: 'URI_TOO_LONG', instance: path })
  t.equal(tooLong.headers['x-request-id'], 'client-chosen-1', "the client's request id, as on every answer")
  t.equal(tooLong.headers.ratelimit, '"default";r=1;t=60', 'counted against the caller')

  // The same header set as a routed answer (a 400 for an invalid id), but the request's own timing.
  const routed = await send(t, app, get('/api/v1/orders/0x10', { authorization }))
  t.equal(routed.status, 400)
  const names = (answer: RawAnswer) =>
    Object.keys(answer.headers)
      .filter((name) => name !== 'server-timing')
      .sort()
  t.same(names(tooLong), names(routed), 'the same headers as a routed answer (but Server-Timing)')

  const refused = await send(t, app, get(path, { authorization }))
  t.equal(refused.status, 429, 'past the budget, the router error is refused like any request')
  assertCarriesTheCommonHeaders(t, refused, '429')
  t.match(refused.headers['retry-after'], /^\d+$/)
  t.equal(JSON.parse(refused.body).code, 'RATE_LIMITED')
})

t.test('%zz in a path is 400 INVALID_URL with every header, and its instance is not escaped again', async (t) => {
  const app = await listeningApp(t)
  for (const path of ['/api/v1/orders/%zz', '/api/v1/orders/%zz/items?limit=1', '/no/such/%zz']) {
    const answer = await send(t, app, get(path, bearer(2, 'orders:read')))
    t.equal(answer.status, 400, path)
    assertCarriesTheCommonHeaders(t, answer, path)
    const problem = JSON.parse(answer.body)
    t.match(problem, { code: 'INVALID_URL', detail: 'The URL is not valid (a malformed percent-encoding).' })
    t.notOk('instance' in problem, `${path}: no instance, rather than %25zz, a URL the client never sent`)
    t.notMatch(answer.body, /%25/)
    t.equal(answer.headers['ratelimit-policy'], '"default";q=600;w=60', 'a caller: counted and reported')
  }
})
