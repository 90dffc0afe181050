/**
 * A bearer token lives at most JWT_MAX_LIFETIME (decisions §13, default 24 h), measured from `iat`
 * to `exp`; without `iat` (or with one in the future) from now. A longer-lived token is refused
 * like any invalid one: 401 with `invalid_token` over HTTP, 4403 on a WebSocket.
 */
import t from 'tap'
import { createSigner } from 'fast-jwt'
import { tokenLifetimeSeconds } from '../../src/auth/tokens.ts'
import { build, TEST_JWT_SECRET } from '../helper.ts'
import { client, listening } from '../graphql/subscription-clients.ts'

const now = () => Math.floor(Date.now() / 1000)
const HOUR = 3600
const YEAR_9999 = Math.floor(Date.UTC(9999, 0, 1) / 1000)
// fast-jwt keeps an `iat` it is given; told not to add one, it drops any: each token says which it has.
const signWithIat = createSigner({ key: TEST_JWT_SECRET, algorithm: 'HS256' })
const signWithoutIat = createSigner({ key: TEST_JWT_SECRET, algorithm: 'HS256', noTimestamp: true })

const token = (claims: { exp: number; iat?: number }) =>
  (claims.iat === undefined ? signWithoutIat : signWithIat)({ sub: '2', scope: 'orders:read', ...claims })

async function status(app: Awaited<ReturnType<typeof build>>, jwt: string) {
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders?limit=1', headers: { authorization: `Bearer ${jwt}` } })
  return { status: response.statusCode, challenge: response.headers['www-authenticate'], body: response.json() }
}

t.test('a token whose exp is in the year 9999 is 401 invalid_token, with or without iat', async (t) => {
  const app = await build(t)
  for (const [name, jwt] of [
    ['iat now', token({ iat: now(), exp: YEAR_9999 })],
    ['no iat', token({ exp: YEAR_9999 })],
    ['iat in the future', token({ iat: YEAR_9999 - HOUR, exp: YEAR_9999 })],
  ] as const) {
    const answer = await status(app, jwt)
    t.equal(answer.status, 401, name)
    t.equal(answer.body.code, 'UNAUTHENTICATED', name)
    t.match(answer.challenge, /error="invalid_token"/, name)
    t.match(answer.body.detail, /lives longer than this server accepts \(86400 s/, name)
  }
})

t.test('the lifetime is exp - iat: 24 h is accepted, a second more is not, even when most of it has passed', async (t) => {
  const app = await build(t)
  t.equal((await status(app, token({ iat: now(), exp: now() + 24 * HOUR }))).status, 200, 'exactly 24 h')
  t.equal((await status(app, token({ iat: now(), exp: now() + 24 * HOUR + 1 }))).status, 401, '24 h and a second')
  t.equal((await status(app, token({ iat: now() - 30 * HOUR, exp: now() + HOUR }))).status, 401, 'issued 30 h ago, one hour left')
  const withoutIat = token({ exp: now() + 23 * HOUR })
  t.notOk('iat' in JSON.parse(Buffer.from(withoutIat.split('.')[1]!, 'base64url').toString()), 'the token has no iat')
  t.equal((await status(app, withoutIat)).status, 200, 'no iat: 23 h from now is within the limit')
  t.equal((await status(app, token({ exp: now() + 25 * HOUR }))).status, 401, 'no iat: 25 h from now is not')
})

t.test('JWT_MAX_LIFETIME sets the limit', async (t) => {
  const app = await build(t, { env: { JWT_MAX_LIFETIME: '48h' } })
  t.equal((await status(app, token({ iat: now(), exp: now() + 30 * HOUR }))).status, 200)
  t.equal((await status(app, token({ iat: now(), exp: now() + 49 * HOUR }))).status, 401)
})

t.test('on a WebSocket such a token is closed 4403 like any invalid one', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const url = await listening(app)
  const closed = await new Promise<{ code?: number; reason?: string }>((resolve) => {
    // An admitted connection is never closed: after a generous wait, say so rather than hang.
    const admitted = setTimeout(() => resolve({ reason: 'still open: the token was admitted' }), 10_000)
    client(t, url, token({ iat: now(), exp: YEAR_9999 })).subscribe(
      { query: 'subscription { orderCreated { id } }' },
      {
        next: () => {},
        error: (error) => {
          clearTimeout(admitted)
          resolve(error as { code?: number; reason?: string })
        },
        complete: () => resolve({}),
      },
    )
  })
  t.equal(closed.code, 4403)
  t.match(closed.reason, /^Forbidden: The token lives longer/)
})

t.test('tokenLifetimeSeconds counts from iat, or from now when iat is missing or later', async (t) => {
  t.equal(tokenLifetimeSeconds({ iat: 1000, exp: 5000 }, 2000), 4000)
  t.equal(tokenLifetimeSeconds({ exp: 5000 }, 2000), 3000)
  t.equal(tokenLifetimeSeconds({ iat: 4000, exp: 5000 }, 2000), 3000)
})
