/**
 * A real OpenID provider for the tests: oidc-provider (the certified Node.js implementation) on a
 * loopback port of its own, issuing JWT access tokens for this service's audience through the
 * client credentials grant. Its signing keys are the test's, so that a test can rotate them (the
 * provider starts again on the same port and issuer with other keys) and sign, with the very keys
 * the provider publishes, the tokens a provider would never issue (the refusals). It counts the
 * requests for its JWKS.
 */
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { type CryptoKey, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import Provider, { errors } from 'oidc-provider'

/** The `aud` the provider gives this service's tokens (JWT_AUDIENCE). */
export const AUDIENCE = 'https://contract-api.test'
/** The claim that carries the user id (JWT_USER_ID_CLAIM): the provider's `sub` is its client id. */
export const USER_ID_CLAIM = 'https://contract-api.test/user_id'
/** The client that acts for Grace (user 2), and one that acts for no user of the service. */
export const CLIENTS = { grace: 'grace-agent', nobody: 'reporting-job' } as const
const CLIENT_SECRET = 'a-client-secret-of-the-tests-0123456789'
const SCOPES = 'orders:read orders:write articles:write admin'

export interface SigningKey {
  kid: string
  alg: 'ES256' | 'RS256' | 'EdDSA'
  privateKey: CryptoKey
  /** As the provider publishes it. */
  publicJwk: JWK
  /** As the provider is configured with it. */
  privateJwk: JWK
}

export async function signingKey(kid: string, alg: SigningKey['alg']): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return {
    kid,
    alg,
    privateKey,
    publicJwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' },
    privateJwk: { ...(await exportJWK(privateKey)), kid, use: 'sig' },
  }
}

/**
 * A token as the provider issues Grace's (its claims, its `typ`, a ten-minute life), signed by the
 * test with `key`; `claims` and `header` change or add what a refusal needs.
 */
export async function signedAs(
  key: { privateKey: CryptoKey | Uint8Array; alg: string; kid: string },
  issuer: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({
    sub: CLIENTS.grace,
    client_id: CLIENTS.grace,
    [USER_ID_CLAIM]: '2',
    scope: 'orders:read orders:write',
    iss: issuer,
    aud: AUDIENCE,
    iat: now,
    exp: now + 600,
    jti: randomUUID(),
    ...claims,
  })
    .setProtectedHeader({ alg: key.alg, typ: 'at+jwt', kid: key.kid, ...header })
    .sign(key.privateKey)
}

/** Keys for the provider: it starts with the first three (`signer` signs); `stranger` it never publishes. */
export async function providerKeys(): Promise<Record<'signer' | 'rsa' | 'ed' | 'stranger', SigningKey>> {
  const [signer, rsa, ed, stranger] = await Promise.all([
    signingKey('2026-a', 'ES256'),
    signingKey('rsa', 'RS256'),
    signingKey('ed', 'EdDSA'),
    signingKey('published-by-nobody', 'ES256'),
  ])
  return { signer, rsa, ed, stranger }
}

/** The app's settings for the provider's tokens, and no HS256 token at all (JWT_SECRET unset). */
export function tokensOf(issuer: string): Record<string, string> {
  return { JWT_ISSUER: issuer, JWT_AUDIENCE: AUDIENCE, JWT_USER_ID_CLAIM: USER_ID_CLAIM, JWT_SECRET: '' }
}

export interface ProviderOptions {
  /** Sent with the JWKS: oidc-provider sends no Cache-Control, Keycloak before release 23 sent `no-cache`. */
  jwksCacheControl?: string
}

export interface IdentityProvider {
  issuer: string
  /** GETs of the JWKS so far. */
  readonly jwksRequests: number
  /** A client credentials token of `client`, signed with the provider's first key. */
  token(client: string, scope?: string): Promise<string>
  /** Stops, then starts again on the same port with `keys` (the first one signs): a key rotation. */
  restart(keys: SigningKey[], options?: ProviderOptions): Promise<void>
  stop(): Promise<void>
}

/**
 * Where the provider keeps what it stores (little, for client credentials): a Map of its own. The
 * default adapter works as well, but warns on every start that it is for development only.
 */
function mapAdapter() {
  const stored = new Map<string, Record<string, unknown>>()
  return class MapAdapter {
    model: string
    constructor(model: string) {
      this.model = model
    }
    async upsert(id: string, payload: Record<string, unknown>) {
      stored.set(`${this.model}:${id}`, payload)
    }
    async find(id: string) {
      return stored.get(`${this.model}:${id}`)
    }
    async findByUid(uid: string) {
      return [...stored.values()].find((payload) => payload.uid === uid)
    }
    async findByUserCode(userCode: string) {
      return [...stored.values()].find((payload) => payload.userCode === userCode)
    }
    async consume(id: string) {
      const payload = stored.get(`${this.model}:${id}`)
      if (payload) payload.consumed = Math.floor(Date.now() / 1000)
    }
    async destroy(id: string) {
      stored.delete(`${this.model}:${id}`)
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, payload] of stored) if (payload.grantId === grantId) stored.delete(key)
    }
  }
}

function provider(issuer: string, keys: SigningKey[]): Provider {
  const [signing] = keys
  if (!signing) throw new Error('a provider needs a signing key')
  return new Provider(issuer, {
    adapter: mapAdapter(),
    scopes: SCOPES.split(' '),
    jwks: { keys: keys.map((key) => key.privateJwk) },
    clients: Object.values(CLIENTS).map((client_id) => ({
      client_id,
      client_secret: CLIENT_SECRET,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: SCOPES,
    })),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== AUDIENCE) throw new errors.InvalidTarget()
          return {
            scope: SCOPES,
            audience: AUDIENCE,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: signing.alg, kid: signing.kid } },
          }
        },
      },
    },
    // How a provider carries a user id of the API in a claim of its own (docs/operations.md).
    extraTokenClaims: (_ctx, token) => ('clientId' in token && token.clientId === CLIENTS.grace ? { [USER_ID_CLAIM]: '2' } : undefined),
    ttl: { ClientCredentials: 600 },
  })
}

/** The provider, listening on a port of its own with `keys` (the first one signs), stopped when the test ends. */
export async function startIdentityProvider(
  t: { teardown(fn: () => unknown): void },
  keys: SigningKey[],
  options: ProviderOptions = {},
): Promise<IdentityProvider> {
  let server: Server | undefined
  let port = 0
  let jwksRequests = 0
  let issuer = ''

  async function start(keys: SigningKey[], options: ProviderOptions): Promise<void> {
    const listening = createServer()
    listening.listen(port, '127.0.0.1')
    await once(listening, 'listening')
    port = (listening.address() as AddressInfo).port
    issuer = `http://127.0.0.1:${port}`
    const handle = provider(issuer, keys).callback()
    listening.on('request', (request, response) => {
      if (request.url === '/jwks') {
        jwksRequests++
        if (options.jwksCacheControl) response.setHeader('cache-control', options.jwksCacheControl)
      }
      handle(request, response)
    })
    server = listening
  }

  async function stop(): Promise<void> {
    if (!server) return
    const closing = server
    server = undefined
    closing.closeAllConnections()
    await new Promise<void>((resolve) => closing.close(() => resolve()))
  }
  t.teardown(stop)
  await start(keys, options)

  return {
    get issuer() {
      return issuer
    },
    get jwksRequests() {
      return jwksRequests
    },
    async token(client, scope = 'orders:read orders:write') {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client}:${CLIENT_SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource: AUDIENCE }),
      })
      const body = (await response.json()) as { access_token?: string }
      if (response.status !== 200 || !body.access_token) throw new Error(`the provider issued no token: ${JSON.stringify(body)}`)
      return body.access_token
    },
    async restart(keys) {
      await stop()
      await start(keys, options)
    },
    stop,
  }
}
