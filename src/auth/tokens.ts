/**
 * Bearer tokens: one verifier for every way a credential reaches the service (REST, GraphQL over
 * HTTP and WebSocket, the event stream, MCP), built once per app from the configuration.
 *
 * Two kinds of token, told apart by their `alg` (decisions §2, §18):
 * - HS256 with JWT_SECRET, the service's own (`npm run token`, development and tests). Refused
 *   outright when JWT_ISSUER is set and JWT_SECRET is not, the development secret included.
 * - With JWT_ISSUER, the identity provider's: signed with an asymmetric algorithm by a key of its
 *   JWKS (issuer-keys.ts), with its `iss` and this service's `aud`, within `exp` and `nbf` give or
 *   take CLOCK_SKEW_SECONDS. An HS* token is never checked against the provider's keys (the
 *   algorithm confusion that would let a public key serve as an HMAC secret), and a token whose
 *   header says where to find its key (`jku`, `x5u`, `jwk`, `x5c`) is refused.
 *
 * Then one rule for both: `exp` required, a lifetime of at most JWT_MAX_LIFETIME (decisions §13: a
 * stateless token cannot be revoked, so its lifetime is all that bounds a stolen one), the user id
 * from the claim JWT_USER_ID_CLAIM names (`sub` by default), the scopes from `scope` or `scp`.
 */
import { createSigner, createVerifier, TokenError } from 'fast-jwt'
import { decodeProtectedHeader, errors, jwtVerify, type ProtectedHeaderParameters } from 'jose'
import type { IssuerConfig } from '../config.ts'
import { MAX_RECORD_ID, parseRecordId } from '../record-id.ts'
import type { Caller } from './caller.ts'
import { createIssuerKeys, type IssuerKeys, IssuerKeysUnavailable } from './issuer-keys.ts'

/**
 * Signs the service's own HS256 tokens. With a user id claim other than `sub`, the user id goes
 * in that claim too, so that the token passes the rule every token passes.
 */
export function createTokenSigner(
  secret: string,
  userIdClaim = 'sub',
): (claims: { sub: string; scope: string }, ttlSeconds: number) => string {
  const sign = createSigner({ key: secret, algorithm: 'HS256' })
  return (claims, ttlSeconds) => {
    const now = Math.floor(Date.now() / 1000)
    const userId = userIdClaim === 'sub' ? {} : { [userIdClaim]: claims.sub }
    return sign({ sub: claims.sub, scope: claims.scope, ...userId, iat: now, exp: now + ttlSeconds })
  }
}

export type TokenVerification = { ok: true; caller: Caller } | { ok: false; reason: string }

/**
 * How long a token is meant to live, in seconds: `exp - iat`. Without `iat`, or with an `iat` in the
 * future, it is measured from now, so that leaving the claim out (or post-dating it) buys no time:
 * such a token is refused while its `exp` is more than the maximum ahead.
 */
export function tokenLifetimeSeconds(claims: { exp: number; iat?: number | undefined }, nowSeconds: number): number {
  const issuedAt = typeof claims.iat === 'number' ? Math.min(claims.iat, nowSeconds) : nowSeconds
  return claims.exp - issuedAt
}

/** How many verified tokens one verifier remembers (about 0.5 KB each). */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000

/**
 * Remembers the Caller of each verified token until the token's `exp`, at most `size` of them (the
 * least recently used goes first). Only acceptances are kept: every check that accepted a token
 * stays true while it lives (its signature, its `nbf` already passed, and a lifetime measured from
 * `min(iat, now)` only shrinks), so a cached Caller is the one a new verification would build, as
 * long as the key that signed it is published: the verifier empties the cache when the issuer
 * withdraws a key. Refusals are not kept (fast-jwt caches its own, knowing when an `nbf` comes due).
 */
export function createVerifiedTokenCache(size: number): {
  get(token: string, nowMs: number): Caller | undefined
  set(token: string, caller: Caller): void
  clear(): void
} {
  // A Map iterates in insertion order: re-inserting on a hit makes the first key the least recent.
  const callers = new Map<string, Caller>()
  return {
    get(token, nowMs) {
      const caller = callers.get(token)
      if (caller === undefined) return undefined
      callers.delete(token)
      if (nowMs >= caller.expiresAt) return undefined
      callers.set(token, caller)
      return caller
    },
    set(token, caller) {
      callers.delete(token)
      if (callers.size >= size) {
        const oldest = callers.keys().next()
        if (oldest.done !== true) callers.delete(oldest.value)
      }
      callers.set(token, caller)
    },
    clear() {
      callers.clear()
    },
  }
}

/** The algorithms an issuer's token may be signed with: asymmetric only (JWS, RFC 7518 and RFC 8037). */
export const ISSUER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** How far an issuer's clock may be from ours when `exp` and `nbf` are checked. */
export const CLOCK_SKEW_SECONDS = 30

/** Header parameters that say where a token's key is: never followed, and a token carrying one is refused. */
const KEY_SOURCE_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const

const refused = (reason: string): { ok: false; reason: string } => ({ ok: false, reason })
const MALFORMED = refused('The token is malformed.')
const EXPIRED = refused('The token has expired.')
const NOT_YET_VALID = refused('The token is not valid yet.')
const BAD_SIGNATURE = refused('The token signature is invalid.')
const NO_EXP = refused('The token lacks a required claim (exp).')

export interface TokenVerifierOptions {
  /** The HS256 key; undefined: no HS256 token is accepted. */
  secret: string | undefined
  issuer: IssuerConfig | undefined
  /** The claim that carries the user id (JWT_USER_ID_CLAIM). */
  userIdClaim: string
  maxLifetimeMs: number
  /** Where the issuer's key fetches report trouble (the app's log). */
  log: { warn(message: string): void; info(message: string): void }
  cacheSize?: number
}

export interface TokenVerifier {
  /**
   * The caller a token stands for, or why it is refused. Synchronous for a token verified before
   * and for HS256; a promise for an issuer's token seen for the first time (its signature is
   * checked with WebCrypto, and an unknown key may wait, boundedly, for a fetch). Never rejects.
   */
  verify(token: string): TokenVerification | Promise<TokenVerification>
  /** Begins fetching the issuer's keys, so that the first request need not wait for them. */
  start(): void
  /** Abandons a key fetch under way. */
  close(): void
}

/** The user id a claim's value stands for: a record id, as a string (`"2"`) or a JSON number (`2`). */
function userIdOf(value: unknown): number | undefined {
  if (typeof value === 'string') return parseRecordId(value)
  if (typeof value === 'number' && Number.isSafeInteger(value)) return parseRecordId(String(value))
  return undefined
}

/** `scope` as RFC 9068 and RFC 8693 write it (space-separated); without it, `scp` (Okta: an array; Entra ID: a string). */
function scopesOf(claims: Record<string, unknown>): Set<string> {
  const { scope, scp } = claims
  const listed = typeof scope === 'string' ? scope : (scp ?? '')
  if (typeof listed === 'string') return new Set(listed.split(' ').filter(Boolean))
  return new Set(Array.isArray(listed) ? listed.filter((each): each is string => typeof each === 'string' && each !== '') : [])
}

/** The rule every accepted signature then passes, whoever signed it. */
function callerOf(claims: Record<string, unknown>, userIdClaim: string, maxLifetimeMs: number): TokenVerification {
  const { exp, iat } = claims
  if (typeof exp !== 'number') return NO_EXP
  if (tokenLifetimeSeconds({ exp, iat: typeof iat === 'number' ? iat : undefined }, Date.now() / 1000) * 1000 > maxLifetimeMs) {
    return refused(`The token lives longer than this server accepts (${maxLifetimeMs / 1000} s from iat to exp).`)
  }
  const userId = userIdOf(claims[userIdClaim])
  if (userId === undefined) {
    return refused(
      `The token carries no user id: its "${userIdClaim}" claim must be the id of a user of this service, a whole number from 1 to ${MAX_RECORD_ID}.`,
    )
  }
  const scopes = scopesOf(claims)
  return { ok: true, caller: { subject: String(userId), userId, scopes, admin: scopes.has('admin'), expiresAt: exp * 1000 } }
}

/** A signature and its `exp` and `nbf` checked: the token's claims, or why it is refused. */
type SignatureCheck = { ok: true; claims: Record<string, unknown> } | { ok: false; reason: string }

/** Checks an HS256 token with `secret`. */
function createSecretCheck(secret: string): (token: string) => SignatureCheck {
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], requiredClaims: ['exp'], cache: 1000 })
  return (token) => {
    try {
      return { ok: true, claims: verify(token) as Record<string, unknown> }
    } catch (error) {
      if (error instanceof TokenError) {
        if (error.code === TokenError.codes.expired) return EXPIRED
        if (error.code === TokenError.codes.inactive) return NOT_YET_VALID
        if (error.code === TokenError.codes.invalidSignature) return BAD_SIGNATURE
        if (error.code === TokenError.codes.missingRequiredClaim) return NO_EXP
      }
      return MALFORMED
    }
  }
}

/** Checks an issuer's token with jose against the issuer's keys; never rejects. */
function createIssuerCheck(issuer: IssuerConfig, keys: IssuerKeys): (token: string) => Promise<SignatureCheck> {
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys.keyFor, {
        issuer: issuer.issuer,
        audience: issuer.audience,
        algorithms: ISSUER_ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['exp'],
      })
      return { ok: true, claims: payload }
    } catch (error) {
      return issuerRefusal(error, issuer)
    }
  }
}

/** An issuer's token refused by jose, as the reason a client reads. */
function issuerRefusal(error: unknown, issuer: IssuerConfig): SignatureCheck {
  if (error instanceof errors.JWTExpired) return EXPIRED
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return NOT_YET_VALID
    if (error.claim === 'iss') return refused(`The token was not issued by ${issuer.issuer} (its iss).`)
    if (error.claim === 'aud') return refused(`The token is not meant for this service: its aud must be ${issuer.audience}.`)
    if (error.claim === 'exp') return NO_EXP
    return refused(`The token's ${error.claim} claim is invalid.`)
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return BAD_SIGNATURE
  if (error instanceof errors.JWKSNoMatchingKey)
    return refused(`The token is signed with a key ${issuer.issuer} does not publish (its kid).`)
  if (error instanceof errors.JWKSMultipleMatchingKeys) return refused('The token names no key (kid), and the issuer publishes several.')
  if (error instanceof IssuerKeysUnavailable) return refused(`The keys of ${issuer.issuer} could not be fetched: try again shortly.`)
  return MALFORMED
}

/**
 * The verifier of one app: a token's Caller is cached until the token's `exp`, so a client reusing
 * its token costs one lookup. Each call makes its own cache and key set: nothing is shared between apps.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const { issuer, userIdClaim, maxLifetimeMs } = options
  const verified = createVerifiedTokenCache(options.cacheSize ?? VERIFIED_TOKEN_CACHE_SIZE)
  const checkSecret = options.secret === undefined ? undefined : createSecretCheck(options.secret)
  const issuerKeys =
    issuer &&
    createIssuerKeys({
      issuer: issuer.issuer,
      jwksUrl: issuer.jwksUrl,
      fetchTimeoutMs: issuer.fetchTimeoutMs,
      cooldownMs: issuer.cooldownMs,
      log: options.log,
      // A token verified with a withdrawn key must be verified again, and refused.
      onKeysWithdrawn: () => verified.clear(),
    })
  const checkIssued = issuer && issuerKeys && createIssuerCheck(issuer, issuerKeys)
  const wrongAlgorithm = refused(
    issuer === undefined
      ? 'The token must be signed with HS256.'
      : `The token must be signed by ${issuer.issuer} with one of ${ISSUER_ALGORITHMS.join(', ')}${checkSecret ? ', or with HS256' : ''}.`,
  )

  /** The checked token's caller (remembered), or its refusal. */
  function accept(token: string, check: SignatureCheck): TokenVerification {
    if (!check.ok) return check
    const verification = callerOf(check.claims, userIdClaim, maxLifetimeMs)
    if (verification.ok) verified.set(token, verification.caller)
    return verification
  }

  return {
    verify(token) {
      const cached = verified.get(token, Date.now())
      if (cached !== undefined) return { ok: true, caller: cached }
      let header: ProtectedHeaderParameters
      try {
        header = decodeProtectedHeader(token)
      } catch {
        return MALFORMED
      }
      const keySource = KEY_SOURCE_HEADERS.find((name) => header[name] !== undefined)
      if (keySource !== undefined) {
        return refused(`The token's header names its key (${keySource}); keys come only from this server's configuration.`)
      }
      if (header.alg === 'HS256' && checkSecret) return accept(token, checkSecret(token))
      if (checkIssued && typeof header.alg === 'string' && ISSUER_ALGORITHMS.includes(header.alg)) {
        return checkIssued(token).then((check) => accept(token, check))
      }
      return wrongAlgorithm
    },
    start() {
      issuerKeys?.start()
    },
    close() {
      issuerKeys?.close()
    },
  }
}
