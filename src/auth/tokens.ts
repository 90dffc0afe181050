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

export function createTokenVerifier(secret: string, maxLifetimeMs: number): (token: string) => TokenVerification {
  const verify = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    requiredClaims: ['sub', 'exp'],
    cache: 1000,
  })
  return (token) => {
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
    return {
      ok: true,
      caller: { subject: claims.sub, userId, scopes, admin: scopes.has('admin'), expiresAt: claims.exp * 1000 },
    }
  }
}
