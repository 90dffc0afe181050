import t from 'tap'
import { createSigner } from 'fast-jwt'
import { buildApp } from '../../src/app.ts'
import { bearer, build, createOrder, createTestDatabase, gql, TEST_JWT_SECRET, testConfig, tokenFor } from '../helper.ts'
import { captureLogText } from '../log-capture.ts'

const now = () => Math.floor(Date.now() / 1000)

function unsignedToken(claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`
}

t.test('every kind of bad credential is 401 with the RFC 6750 challenge and a problem body', async (t) => {
  const app = await build(t)
  const sign = createSigner({ key: TEST_JWT_SECRET, algorithm: 'HS256' })
  const wrongKey = createSigner({ key: 'another-secret-0123456789abcdef0123456789', algorithm: 'HS256' })
  const cases: Record<string, string | undefined> = {
    missing: undefined,
    'not bearer': 'Basic dXNlcjpwYXNz',
    malformed: 'Bearer not.a.jwt',
    expired: `Bearer ${sign({ sub: '2', scope: 'orders:read', exp: now() - 10, iat: now() - 100 })}`,
    'not yet valid': `Bearer ${sign({ sub: '2', scope: 'orders:read', exp: now() + 600, nbf: now() + 300 })}`,
    'wrongly signed': `Bearer ${wrongKey({ sub: '2', scope: 'orders:read', exp: now() + 600 })}`,
    'alg none': `Bearer ${unsignedToken({ sub: '2', scope: 'orders:read', exp: now() + 600 })}`,
    'no exp': `Bearer ${sign({ sub: '2', scope: 'orders:read' })}`,
    'sub not a user id': `Bearer ${sign({ sub: 'root', scope: 'admin', exp: now() + 600 })}`,
  }
  for (const [name, authorization] of Object.entries(cases)) {
    const response = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: authorization ? { authorization } : {} })
    t.equal(response.statusCode, 401, name)
    t.match(response.headers['content-type'], /^application\/problem\+json/, name)
    t.equal(response.json().code, 'UNAUTHENTICATED', name)
    const challenge = response.headers['www-authenticate'] as string
    t.match(challenge, /^Bearer realm="api"/, name)
    if (authorization === undefined) t.notMatch(challenge, /invalid_token/, `${name}: no error when nothing was sent`)
    else t.match(challenge, /error="invalid_token"/, `${name}: error="invalid_token" when a credential was sent`)
  }
})

t.test('a valid token without the needed scope is 403', async (t) => {
  const app = await build(t)
  const response = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], bearer(2, 'orders:read'))
  t.equal(response.statusCode, 403)
  t.equal(response.json().code, 'FORBIDDEN')
})

t.test('GraphQL without a valid credential is 401 before anything executes', async (t) => {
  const app = await build(t)
  const response = await gql(app, '{ me { id } }')
  t.equal(response.statusCode, 401)
  t.match(response.headers['www-authenticate'], /^Bearer realm="api"/)
  t.equal(response.json().errors[0].extensions.code, 'UNAUTHENTICATED')
})

t.test('logs never contain a token or an Authorization header', async (t) => {
  const log = captureLogText()
  const database = await createTestDatabase(t)
  const app = await buildApp({ config: testConfig({ LOG_LEVEL: 'trace' }), database, loggerStream: log.stream })
  t.teardown(() => app.close())
  const token = tokenFor(2, 'orders:read')
  await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { authorization: `Bearer ${token}` } })
  await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { authorization: 'Bearer broken.token.value' } })
  app.log.info({ req: { headers: { authorization: `Bearer ${token}` } } }, 'a careless log line')
  const output = log.text()
  t.ok(output.length > 0, 'something was logged')
  t.notOk(output.includes(token), 'the token is not in the logs')
  t.notOk(output.includes('broken.token.value'), 'a refused token is not in the logs either')
})
