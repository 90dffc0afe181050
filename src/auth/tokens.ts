/**
 * Bearer tokens: HS256 JWTs with `sub`, `scope`, `exp` and `iat`. Verification pins the algorithm,
 * so `alg: none` and RS/HS confusion tokens are rejected, requires `exp` so that no token lives
 * forever, and refuses a token meant to live longer than JWT_MAX_LIFETIME (decisions §13): a
 * stateless token cannot be revoked, so its lifetime is all that bounds a stolen one.
 */
import { createSigner, createVerifier, TokenError } from 'fast-jwt'
import { parseRecordId } from '../record-id.ts'
import type { Caller } from './caller.ts'

export interface TokenClaims {
  sub: string
  scope: string
  exp?: number
  iat?: number
  nbf?: number
}

export function createTokenSigner(secret: string): (claims: { sub: string; scope: string }, ttlSeconds: number) => string {
  const sign = createSigner({ key: secret, algorithm: 'HS256' })
  return (claims, ttlSeconds) => {
    const now = Math.floor(Date.now() / 1000)
    return sign({ sub: claims.sub, scope: claims.scope, iat: now, exp: now + ttlSeconds })
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
 * `min(iat, now)` only shrinks), so a cached Caller is the one a new verification would build.
 * Refusals are left to fast-jwt's own cache, which knows when an `nbf` comes due.
 */
export function createVerifiedTokenCache(size: number): {
  get(token: string, nowMs: number): Caller | undefined
  set(token: string, caller: Caller): void
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
  }
}

/**
 * A token's verification, built once per token: the Caller (its scopes parsed, its subject read as
 * a user id) is cached until the token's `exp`, so a client reusing its token costs one lookup.
 * Each call makes its own cache: nothing is shared between apps.
 */
export function createTokenVerifier(
  secret: string,
  maxLifetimeMs: number,
  cacheSize = VERIFIED_TOKEN_CACHE_SIZE,
): (token: string) => TokenVerification {
  const verified = createVerifiedTokenCache(cacheSize)
  const verify = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    requiredClaims: ['sub', 'exp'],
    cache: 1000,
  })
  return (token) => {
    const cached = verified.get(token, Date.now())
    if (cached !== undefined) return { ok: true, caller: cached }
    let claims: TokenClaims
    try {
      claims = verify(token) as TokenClaims
    } catch (error) {
      if (error instanceof TokenError) {
        if (error.code === TokenError.codes.expired) return { ok: false, reason: 'The token has expired.' }
        if (error.code === TokenError.codes.inactive) return { ok: false, reason: 'The token is not valid yet.' }
        if (error.code === TokenError.codes.invalidSignature) return { ok: false, reason: 'The token signature is invalid.' }
        if (error.code === TokenError.codes.missingRequiredClaim)
          return { ok: false, reason: 'The token lacks a required claim (sub, exp).' }
        if (error.code === TokenError.codes.invalidAlgorithm) return { ok: false, reason: 'The token must be signed with HS256.' }
      }
      return { ok: false, reason: 'The token is malformed.' }
    }
    // fast-jwt has required exp and checked that it is a number; this tells the type checker.
    if (typeof claims.exp !== 'number') return { ok: false, reason: 'The token lacks a required claim (sub, exp).' }
    if (tokenLifetimeSeconds({ exp: claims.exp, iat: claims.iat }, Date.now() / 1000) * 1000 > maxLifetimeMs) {
      return { ok: false, reason: `The token lives longer than this server accepts (${maxLifetimeMs / 1000} s from iat to exp).` }
    }
    // The subject is a user id, written as every record id on the wire is.
    const userId = typeof claims.sub === 'string' ? parseRecordId(claims.sub) : undefined
    if (userId === undefined) {
      return { ok: false, reason: 'The token subject must be a user id.' }
    }
    const scopes = new Set(typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [])
    const caller: Caller = { subject: claims.sub, userId, scopes, admin: scopes.has('admin'), expiresAt: claims.exp * 1000 }
    verified.set(token, caller)
    return { ok: true, caller }
  }
}
