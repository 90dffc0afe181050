/**
 * A credential counts only in the Authorization header (decisions §12): a token in the query
 * string is ignored, so the request is unauthenticated, and it reaches neither the logs nor a
 * problem's `instance`.
 */
import t from 'tap'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../src/app.ts'
import { redactCredentials } from '../../src/http/redact-credentials.ts'
import { bearer, build, createTestDatabase, testConfig, tokenFor } from '../helper.ts'
import { captureLogText } from '../log-capture.ts'

const NAMES = [
  'access_token',
  'ACCESS_TOKEN',
  'token',
  'Token',
  'id_token',
  'refresh_token',
  'api_key',
  'apikey',
  'jwt',
  'access-token',
  'accessToken',
]

t.test('redactCredentials replaces the values of credential-like parameters and any JWT', async (t) => {
  const jwt = tokenFor(2)
  t.equal(redactCredentials('/api/v1/orders?limit=2&access_token=abc&sort=id'), '/api/v1/orders?limit=2&access_token=REDACTED&sort=id')
  for (const name of NAMES) t.equal(redactCredentials(`/x?${name}=s3cret`), `/x?${name}=REDACTED`, name)
  t.equal(redactCredentials('/x?access%5Ftoken=s3cret'), '/x?access%5Ftoken=REDACTED', 'a percent-encoded name')
  t.equal(redactCredentials('/x?token[]=s3cret'), '/x?token[]=REDACTED', 'a bracketed name')
  t.equal(redactCredentials(`/x?q=${jwt}`), '/x?q=REDACTED', 'a JWT under any name')
  t.equal(redactCredentials(`/x/${jwt}`), '/x/REDACTED', 'a JWT in the path')
  t.equal(redactCredentials('/api/v1/orders?status=paid&limit=5'), '/api/v1/orders?status=paid&limit=5', 'other parameters are kept')
  t.equal(redactCredentials('/healthz'), '/healthz')
})

t.test('a token in the query string does not authenticate', async (t) => {
  const app = await build(t)
  const token = tokenFor(1, 'admin')
  for (const name of NAMES) {
    const rest = await app.inject({ method: 'GET', url: `/api/v1/orders?${name}=${token}` })
    t.equal(rest.statusCode, 401, `REST ?${name}=`)
    t.notMatch(rest.headers['www-authenticate'], /invalid_token/, 'as if no credential had been sent')
    t.notOk(rest.body.includes(token), 'the problem does not echo the token')
    t.match(rest.json().instance, /REDACTED/, 'its instance is redacted')
  }
  const post = await app.inject({ method: 'POST', url: `/graphql?access_token=${token}`, payload: { query: '{ me { id } }' } })
  t.equal(post.statusCode, 401, 'GraphQL POST')
  const get = await app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent('{ me { id } }')}&access_token=${token}` })
  t.equal(get.statusCode, 401, 'GraphQL GET')
  // The header still works, whatever the query string says.
  const withHeader = await app.inject({ method: 'GET', url: '/api/v1/users/2', headers: bearer(2, 'orders:read') })
  t.equal(withHeader.statusCode, 200)
})

t.test('a token in the query string never reaches the logs', async (t) => {
  const log = captureLogText()
  const database = await createTestDatabase(t)
  const app = await buildApp({ config: testConfig({ LOG_LEVEL: 'trace' }), database, loggerStream: log.stream })
  t.teardown(() => app.close())
  const token = tokenFor(2, 'orders:read')
  for (const name of NAMES) {
    await app.inject({ method: 'GET', url: `/api/v1/orders?limit=2&${name}=${token}` })
    await app.inject({ method: 'GET', url: `/healthz?${name}=plain-secret-${name}` })
  }
  await app.inject({ method: 'POST', url: `/graphql?access_token=${token}`, payload: { query: '{ me { id } }' } })
  await app.inject({ method: 'GET', url: `/api/v1/orders/${token}` })

  // A request Node cannot parse is logged at trace level with its raw bytes.
  await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = connect({ host: '127.0.0.1', port: (app.server.address() as AddressInfo).port })
  socket.on('error', () => {}).resume()
  socket.write(
    `GET /api/v1/orders?access_token=${token} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nBroken header\r\n\r\n`,
  )
  await new Promise((resolve) => socket.once('close', resolve))

  const output = log.text()
  t.match(output, /access_token=REDACTED/, 'the request lines were logged, with the value redacted')
  t.match(output, /client error/, 'the unparsable request was logged')
  t.notOk(output.includes(token), 'the token is not in the logs')
  t.notOk(output.includes(Array.from(Buffer.from(token)).join(',')), 'not even as raw bytes')
  for (const name of NAMES) t.notOk(output.includes(`plain-secret-${name}`), `a ?${name}= value that is no JWT is not in the logs either`)
})
