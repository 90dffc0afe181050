/**
 * What an identity provider's token must be (decisions §18), refusal by refusal: each is 401
 * `invalid_token` with a detail naming what is wrong, never a 5xx. The tokens are signed with the
 * keys a real provider (oidc-provider) publishes, or with keys it does not, as an attacker would.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { createPublicKey, randomUUID } from 'node:crypto'
import { importJWK, SignJWT } from 'jose'
import { bearer, build, createOrder } from '../helper.ts'
import { eventually, rawConnection, subscriptionCount } from '../graphql/subscription-clients.ts'
import { serve } from '../modules/events/event-helpers.ts'
import {
  AUDIENCE,
  CLIENTS,
  providerKeys,
  signedAs,
  signingKey,
  startIdentityProvider,
  tokensOf,
  USER_ID_CLAIM,
} from './identity-provider.ts'

/** JWT_JWKS_COOLDOWN: shorter than the default 10 s, so that the storm below need not wait that long. */
const COOLDOWN_MS = 2000

const { signer, rsa, ed, stranger } = await providerKeys()
const provider = await startIdentityProvider(t, [signer, rsa, ed])
const { issuer } = provider
const app = await build(t, {
  env: {
    ...tokensOf(issuer),
    JWT_JWKS_COOLDOWN: `${COOLDOWN_MS}ms`,
    RATE_LIMIT_MAX: '100000',
  },
})

const ordersWith = (token: string) => app.inject({ method: 'GET', url: '/api/v1/orders', headers: { authorization: `Bearer ${token}` } })

async function accepted(t: Test, token: string, name: string) {
  t.equal((await ordersWith(token)).statusCode, 200, name)
}

async function refused(t: Test, token: string, detail: string | RegExp, name = 'refused') {
  const response = await ordersWith(token)
  t.equal(response.statusCode, 401, name)
  t.match(response.headers['www-authenticate'], /^Bearer realm="api", error="invalid_token"/, name)
  t.match(response.json(), { code: 'UNAUTHENTICATED', detail }, name)
}

const now = () => Math.floor(Date.now() / 1000)
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

t.test("the provider's own token, and tokens signed with each of its keys' algorithms, are accepted", async (t) => {
  await accepted(t, await provider.token(CLIENTS.grace), 'issued by the provider (ES256)')
  await accepted(t, await signedAs(rsa, issuer), 'RS256')
  const pss = { kid: rsa.kid, alg: 'PS256', privateKey: await importJWK(rsa.privateJwk, 'PS256') }
  await accepted(t, await signedAs(pss, issuer), 'PS256, with the same RSA key')
  await accepted(t, await signedAs(ed, issuer), 'EdDSA')
  await accepted(t, await signedAs(signer, issuer, { aud: ['https://another-api.example', AUDIENCE] }), 'an aud list naming this service')
  await accepted(t, await signedAs(signer, issuer, { exp: now() - 5 }), 'expired 5 s ago: within the 30 s clock skew')
})

t.test('another issuer', async (t) => {
  await refused(t, await signedAs(signer, 'https://evil.example'), `The token was not issued by ${issuer} (its iss).`)
})

t.test('another audience, or none', async (t) => {
  const detail = `The token is not meant for this service: its aud must be ${AUDIENCE}.`
  await refused(t, await signedAs(signer, issuer, { aud: 'https://another-api.example' }), detail)
  await refused(t, await signedAs(signer, issuer, { aud: undefined }), /aud/)
})

t.test('expired beyond the clock skew, or no exp at all', async (t) => {
  await refused(t, await signedAs(signer, issuer, { iat: now() - 700, exp: now() - 60 }), 'The token has expired.')
  await refused(t, await signedAs(signer, issuer, { exp: undefined }), 'The token lacks a required claim (exp).')
})

t.test('not valid yet (nbf)', async (t) => {
  await refused(t, await signedAs(signer, issuer, { nbf: now() + 300 }), 'The token is not valid yet.')
})

t.test('a kid the provider does not publish', async (t) => {
  await refused(t, await signedAs(stranger, issuer), `The token is signed with a key ${issuer} does not publish (its kid).`)
})

t.test("a kid the provider publishes, and another key's signature", async (t) => {
  const impostor = await signingKey(signer.kid, 'ES256')
  await refused(t, await signedAs(impostor, issuer), 'The token signature is invalid.')
})

t.test('alg confusion: HS256 signed with the public key as its secret; alg none', async (t) => {
  const wrongAlgorithm = `The token must be signed by ${issuer} with one of RS256, RS384, RS512, PS256`
  const claims = { sub: CLIENTS.grace, [USER_ID_CLAIM]: '2', iss: issuer, aud: AUDIENCE, exp: now() + 600 }
  for (const key of [signer, rsa]) {
    const pem = createPublicKey({ key: key.publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' })
    for (const secret of [pem, JSON.stringify(key.publicJwk)]) {
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: key.kid }).sign(Buffer.from(secret))
      await refused(t, forged, wrongAlgorithm, `HS256 with ${key.kid}'s public key`)
    }
  }
  await refused(t, `${encode({ alg: 'none', kid: signer.kid })}.${encode(claims)}.`, wrongAlgorithm, 'alg none')
})

t.test('jku, x5u, jwk and x5c in the header are never followed', async (t) => {
  // The attacker's key server: it must never be asked.
  const attacker = await signingKey('attacker', 'ES256')
  let asked = 0
  const server = createServer((_request, response) => {
    asked++
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify({ keys: [attacker.publicJwk] }))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`
  const certificate = 'MIIBszCCAVmgAwIBAgIUQ3' // a certificate chain's opening: never read
  const headers = { jku: { jku: url }, x5u: { x5u: url }, jwk: { jwk: attacker.publicJwk }, x5c: { x5c: [certificate] } }
  for (const [name, header] of Object.entries(headers)) {
    for (const key of [attacker, { ...attacker, kid: signer.kid }]) {
      const token = await signedAs(key, issuer, {}, header)
      await refused(t, token, `The token's header names its key (${name}); keys come only from this server's configuration.`, name)
    }
  }
  t.equal(asked, 0, "the attacker's key server was never asked")
})

t.test('a storm of made-up kids fetches the keys at most once per JWT_JWKS_COOLDOWN', async (t) => {
  const tokens = await Promise.all(Array.from({ length: 200 }, () => signedAs({ ...stranger, kid: randomUUID() }, issuer)))
  // Past the cooldown since the app's last fetch, so that the first unknown kid may fetch again.
  await sleep(COOLDOWN_MS + 100)
  const before = provider.jwksRequests
  const responses = await Promise.all(tokens.map((token) => ordersWith(token)))
  t.same(new Set(responses.map((response) => response.statusCode)), new Set([401]))
  t.same(
    new Set(responses.map((response) => response.json().detail)),
    new Set([`The token is signed with a key ${issuer} does not publish (its kid).`]),
  )
  t.ok(provider.jwksRequests - before <= 1, `${provider.jwksRequests - before} JWKS request(s) for 200 unknown kids`)
})

t.test('a token without a usable user id is 401 saying which claim', async (t) => {
  const detail = `The token carries no user id: its "${USER_ID_CLAIM}" claim must be the id of a user of this service, a whole number from 1 to 2147483647.`
  await refused(t, await provider.token(CLIENTS.nobody), detail, "the provider's token of a client acting for no user")
  for (const value of ['grace', '02', '0', '2147483648', 2.5, true]) {
    await refused(t, await signedAs(signer, issuer, { [USER_ID_CLAIM]: value }), detail, JSON.stringify(value))
  }
  await accepted(t, await signedAs(signer, issuer, { [USER_ID_CLAIM]: 2 }), 'a JSON number is a user id too')
})

t.test('scopes from scp (an array, as Okta writes it; a string, as Entra ID does) when there is no scope', async (t) => {
  const okta = await signedAs(signer, issuer, { scope: undefined, scp: ['orders:read'] })
  await accepted(t, okta, 'orders:read from scp')
  const refusedWrite = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], { authorization: `Bearer ${okta}` })
  t.equal(refusedWrite.statusCode, 403, 'and orders:write is not among them')
  const entra = await signedAs(signer, issuer, { scope: undefined, scp: 'orders:read orders:write' })
  const created = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], { authorization: `Bearer ${entra}` })
  t.equal(created.statusCode, 201)
})

t.test("a WebSocket whose connection_init waits for its token's verification: what follows waits too, or goes with it", async (t) => {
  const { ws } = await serve(app)
  const admitted = await rawConnection(t, ws)
  // connection_init and a subscribe in one go: the subscribe arrives while the token is being verified.
  admitted.send({ type: 'connection_init', payload: { Authorization: `Bearer ${await signedAs(signer, issuer)}` } })
  admitted.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { orderCreated { databaseId } }' } })
  const answer = await Promise.race([admitted.next('connection_ack'), admitted.closed.then(({ code }) => ({ type: `closed ${code}` }))])
  t.equal(answer.type, 'connection_ack')
  const subscribed = await eventually(() => subscriptionCount(app, 'order.created') === 1)
  t.ok(subscribed, 'the subscribe was taken once the token was')
  if (!subscribed) return
  const created = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], { authorization: `Bearer ${await signedAs(signer, issuer)}` })
  // An order the test before created may still be on its way through the relay when the subscribe is
  // taken (a live subscription starts where its instance's feed is, decisions §11): it may come first.
  const createdId = (message: { payload?: unknown }) =>
    (message.payload as { data?: { orderCreated?: { databaseId?: number } } } | undefined)?.data?.orderCreated?.databaseId
  t.ok(await eventually(() => admitted.messages.some((message) => createdId(message) === created.json().id)), 'its order arrived')
  t.match(
    admitted.messages.find((message) => createdId(message) === created.json().id),
    { id: '1', type: 'next', payload: { data: { orderCreated: { databaseId: created.json().id } } } },
  )

  const refusedConnection = await rawConnection(t, ws)
  const elsewhere = await signedAs(signer, issuer, { aud: 'elsewhere' })
  refusedConnection.send({ type: 'connection_init', payload: { Authorization: `Bearer ${elsewhere}` } })
  refusedConnection.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { orderCreated { databaseId } }' } })
  const closed = await refusedConnection.closed
  t.equal(closed.code, 4403)
  t.match(closed.reason, /^Forbidden: The token is not meant for this service/)
  t.same(refusedConnection.messages, [], 'never acknowledged, nothing answered')
  t.equal(subscriptionCount(app, 'order.created'), 1, 'and nothing subscribed')
})

t.test(
  'beside an issuer that does not answer, JWT_SECRET keeps HS256; no request waits past JWT_JWKS_TIMEOUT or fails with a 5xx',
  async (t) => {
    let asked = 0
    const silent = createServer(() => {
      asked++
    })
    silent.listen(0, '127.0.0.1')
    await once(silent, 'listening')
    t.teardown(() => {
      silent.closeAllConnections()
      silent.close()
    })
    const silentIssuer = 'https://silent.example'
    const waiting = await build(t, {
      env: {
        JWT_ISSUER: silentIssuer,
        JWT_AUDIENCE: AUDIENCE,
        JWT_JWKS_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/jwks`,
        JWT_JWKS_TIMEOUT: '200ms',
      },
    })
    const token = await signedAs(signer, silentIssuer, { [USER_ID_CLAIM]: undefined, sub: '2' })
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        waiting.inject({ method: 'GET', url: '/api/v1/orders', headers: { authorization: `Bearer ${token}` } }),
      ),
    )
    for (const answer of answers) {
      t.equal(answer.statusCode, 401)
      t.equal(answer.json().detail, `The keys of ${silentIssuer} could not be fetched: try again shortly.`)
    }
    t.equal(asked, 1, 'one fetch (at start), however many requests')

    const withSecret = (authorization: string) => waiting.inject({ method: 'GET', url: '/api/v1/orders', headers: { authorization } })
    t.equal((await withSecret(bearer(2).authorization)).statusCode, 200, "an HS256 token of the tests' JWT_SECRET")
    const pem = createPublicKey({ key: signer.publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' })
    const forged = await new SignJWT({ sub: '2', exp: now() + 600 }).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from(pem))
    const confused = await withSecret(`Bearer ${forged}`)
    t.equal(confused.statusCode, 401)
    t.equal(confused.json().detail, 'The token signature is invalid.', 'HS256 is checked with JWT_SECRET only, never with a public key')
  },
)
