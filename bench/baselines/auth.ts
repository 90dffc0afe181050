/**
 * The JWT check every baseline does, the same as the service's (src/auth/tokens.ts and
 * src/plugins/auth.ts): a `Bearer` header, HS256 pinned, `sub` and `exp` required, fast-jwt's
 * verification cache of 1000, `sub` a user id, scopes split on spaces.
 */
import { createHmac } from 'node:crypto'
import { createVerifier } from 'fast-jwt'

export interface BaselineCaller {
  userId: number
  subject: string
  admin: boolean
  scopes: Set<string>
}

export type Authenticate = (authorization: string | undefined) => BaselineCaller | null

export function createAuthenticate(secret: string): Authenticate {
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], requiredClaims: ['sub', 'exp'], cache: 1000 })
  return (authorization) => {
    if (!authorization) return null
    const match = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/i.exec(authorization.trim())
    if (!match) return null
    let claims: { sub?: unknown; scope?: unknown }
    try {
      claims = verify(match[1]!)
    } catch {
      return null
    }
    if (typeof claims.sub !== 'string' || !/^[1-9]\d{0,9}$/.test(claims.sub)) return null
    const scopes = new Set(typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [])
    return { userId: Number(claims.sub), subject: claims.sub, admin: scopes.has('admin'), scopes }
  }
}

export function hasScope(caller: BaselineCaller, scope: string): boolean {
  return caller.admin || caller.scopes.has(scope)
}

/** A signed page cursor, one per page as a team would write it: base64url JSON and an HMAC. */
export function signCursor(secret: string, position: unknown): string {
  const payload = Buffer.from(JSON.stringify(position)).toString('base64url')
  return `${payload}.${createHmac('sha256', secret).update(payload).digest('base64url')}`
}
