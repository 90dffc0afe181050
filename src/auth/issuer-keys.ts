/**
 * The identity provider's signing keys (decisions §18): its JWKS, at JWT_JWKS_URL or at the
 * `jwks_uri` of its OpenID discovery document, kept here and refetched on this module's rules
 * rather than jose's createRemoteJWKSet, which waits for a fetch whenever its copy is stale (so a
 * provider that is down fails every token once the copy is ten minutes old) and measures its
 * cooldown from its last successful fetch (so while the provider is down, every request with an
 * unknown `kid` that finds no fetch under way starts one).
 *
 * - A known key is used at once, from memory, however old the copy: a stale copy is refetched in
 *   the background, and a failed fetch leaves the keys as they were.
 * - An unknown `kid` may cause a fetch, at most one per JWT_JWKS_COOLDOWN whatever the number of
 *   requests, and its request waits for it at most JWT_JWKS_TIMEOUT, and only while the provider
 *   answered the last fetch: when it did not, the request is refused at once and the fetch happens
 *   in the background.
 * - Keys come from the configured URLs only: a token's `jku`, `x5u`, `jwk` or `x5c` is never read
 *   (tokens.ts refuses a token that carries one).
 */
import { createLocalJWKSet, errors, type FlattenedJWSInput, type JWSHeaderParameters, type JSONWebKeySet } from 'jose'

export interface IssuerKeysOptions {
  issuer: string
  /** Where the JWKS is; undefined: the `jwks_uri` of the issuer's discovery document. */
  jwksUrl: string | undefined
  fetchTimeoutMs: number
  cooldownMs: number
  /** Told when the provider stops answering, and when it answers again. */
  log: { warn(message: string): void; info(message: string): void }
  /** Called when a fetched key set lacks a key the previous one had (a key withdrawn by its provider). */
  onKeysWithdrawn(): void
}

/** No key could ever be fetched: the provider was unreachable since the start. */
export class IssuerKeysUnavailable extends Error {}

/** A copy older than this is refetched (in the background), whatever the provider's Cache-Control says. */
const MAX_FRESH_MS = 86_400_000
/** How long a copy is fresh when the provider sends no max-age (jose's default too). */
const DEFAULT_FRESH_MS = 600_000
/** Larger discovery documents and key sets are refused: real ones are a few kilobytes. */
const MAX_DOCUMENT_BYTES = 512 * 1024

type KeySet = ReturnType<typeof createLocalJWKSet>

/** The max-age of a Cache-Control value, `no-cache` and `no-store` as 0; undefined without one. */
function maxAgeSeconds(cacheControl: string | null): number | undefined {
  if (cacheControl === null) return undefined
  if (/(^|,)\s*no-(store|cache)\b/i.test(cacheControl)) return 0
  const maxAge = /(^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl)
  return maxAge ? Number(maxAge[2]) : undefined
}

/** How long a copy is fresh: the provider's max-age, from `minMs` (the cooldown) to MAX_FRESH_MS. */
function freshFor(cacheControl: string | null, minMs: number): number {
  const seconds = maxAgeSeconds(cacheControl)
  return seconds === undefined ? DEFAULT_FRESH_MS : Math.min(Math.max(seconds * 1000, minMs), MAX_FRESH_MS)
}

/** GET `url` as JSON, within `signal`, refusing redirects and bodies over MAX_DOCUMENT_BYTES. */
async function fetchJson(url: string, signal: AbortSignal): Promise<{ body: unknown; cacheControl: string | null }> {
  const response = await fetch(url, {
    signal,
    redirect: 'manual',
    headers: { accept: 'application/json, application/jwk-set+json' },
  })
  if (response.status !== 200) {
    await response.body?.cancel()
    throw new Error(`${url} answered ${response.status}`)
  }
  const declared = Number(response.headers.get('content-length') ?? 0)
  if (declared > MAX_DOCUMENT_BYTES) {
    await response.body?.cancel()
    throw new Error(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength
    if (size > MAX_DOCUMENT_BYTES) throw new Error(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`)
    chunks.push(chunk)
  }
  return { body: JSON.parse(Buffer.concat(chunks).toString('utf8')), cacheControl: response.headers.get('cache-control') }
}

/** The `jwks_uri` of the issuer's OpenID discovery document, which must name the same issuer (OpenID Discovery §4.3). */
async function discoverJwksUrl(issuer: string, signal: AbortSignal): Promise<string> {
  const { body } = await fetchJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, signal)
  const document = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  if (document.issuer !== issuer)
    throw new Error(`the discovery document names the issuer ${JSON.stringify(document.issuer)}, not ${issuer}`)
  const jwksUri = document.jwks_uri
  if (typeof jwksUri !== 'string' || !/^https?:\/\//.test(jwksUri)) throw new Error('the discovery document has no http(s) jwks_uri')
  return jwksUri
}

/** What identifies a key across two fetches: its `kid`, or the whole key when it has none. */
const keyIdentity = (jwk: Record<string, unknown>) => (typeof jwk.kid === 'string' ? `kid:${jwk.kid}` : JSON.stringify(jwk))

export function createIssuerKeys(options: IssuerKeysOptions) {
  const closed = new AbortController()
  let jwksUrl = options.jwksUrl
  let keys: KeySet | undefined
  let identities = new Set<string>()
  let freshUntil = 0
  let lastAttemptAt = Number.NEGATIVE_INFINITY
  // Until a fetch fails, a request waits (boundedly) for the fetch its unknown kid needs.
  let answering = true
  let fetching: Promise<void> | undefined

  async function fetchKeys(): Promise<void> {
    const signal = AbortSignal.any([closed.signal, AbortSignal.timeout(options.fetchTimeoutMs)])
    jwksUrl ??= await discoverJwksUrl(options.issuer, signal)
    const { body, cacheControl } = await fetchJson(jwksUrl, signal)
    // Throws JWKSInvalid for anything that is not {"keys": [objects]}.
    const next = createLocalJWKSet(body as JSONWebKeySet)
    const nextIdentities = new Set((body as JSONWebKeySet).keys.map((jwk) => keyIdentity(jwk as Record<string, unknown>)))
    const withdrawn = [...identities].some((identity) => !nextIdentities.has(identity))
    keys = next
    identities = nextIdentities
    freshUntil = Date.now() + freshFor(cacheControl, options.cooldownMs)
    if (withdrawn) options.onKeysWithdrawn()
  }

  /** Starts a fetch unless one is running or the cooldown has not passed; never rejects. */
  function refresh(): Promise<void> | undefined {
    if (fetching) return fetching
    if (closed.signal.aborted || Date.now() - lastAttemptAt < options.cooldownMs) return undefined
    lastAttemptAt = Date.now()
    fetching = fetchKeys().then(
      () => {
        if (!answering) options.log.info(`The keys of ${options.issuer} could be fetched again.`)
        answering = true
      },
      (error: unknown) => {
        if (answering && !closed.signal.aborted) {
          options.log.warn(
            `The keys of ${options.issuer} could not be fetched (${(error as Error).message}); known keys keep verifying, unknown ones are refused.`,
          )
        }
        answering = false
      },
    )
    fetching.finally(() => {
      fetching = undefined
    })
    return fetching
  }

  /** Waits for `fetch` at most fetchTimeoutMs. */
  async function within(fetch: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, options.fetchTimeoutMs)
    })
    await Promise.race([fetch, bound])
    clearTimeout(timer)
  }

  return {
    /** Fetches the keys in the background, so that the first token need not wait for them. */
    start(): void {
      void refresh()
    },

    /**
     * The key for a token's header, as jose's jwtVerify asks for it. Throws jose's
     * JWKSNoMatchingKey for a key the provider does not publish (after the fetch above, if one
     * was allowed), and IssuerKeysUnavailable when no key set was ever fetched.
     */
    async keyFor(header: JWSHeaderParameters, token: FlattenedJWSInput) {
      if (keys) {
        try {
          const key = await keys(header, token)
          if (Date.now() >= freshUntil) void refresh()
          return key
        } catch (error) {
          if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
        }
      }
      const fetch = refresh()
      if (fetch && answering) await within(fetch)
      if (!keys) throw new IssuerKeysUnavailable()
      return keys(header, token)
    },

    /** Abandons a fetch under way; no other fetch starts. */
    close(): void {
      closed.abort()
    },
  }
}

export type IssuerKeys = ReturnType<typeof createIssuerKeys>
