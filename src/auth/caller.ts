import type { FastifyRequest } from 'fastify'
import { credentialRequired } from '../errors.ts'

/** Who is making a request, as established from a verified bearer token. */
export interface Caller {
  /**
   * The user's id as a string (from the token's `sub`, or the claim JWT_USER_ID_CLAIM names), the
   * key rate limits and idempotency keys use: one user is one caller whatever its token (decisions §18).
   */
  subject: string
  userId: number
  scopes: ReadonlySet<string>
  /** `admin` lifts ownership limits and satisfies every scope requirement. */
  admin: boolean
  /** When the token stops being valid (its `exp`), in milliseconds since the epoch. */
  expiresAt: number
}

/** The scopes are declared once, for codegen (codegen/service-operations.ts). */
export { SCOPES, type Scope } from '../generated/required-scopes.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set from the Authorization header by plugins/auth.ts, every request's first step. */
    caller: Caller | null
    /** Why the sent credential was refused; undefined when none was sent. */
    credentialError: string | undefined
  }
}

/**
 * The request's caller, or 401 with the RFC 6750 WWW-Authenticate header. Here, below both, so
 * that the contract router (http/) and the routes need no plugin (docs/layout.md).
 */
export function requireCaller(request: FastifyRequest): Caller {
  if (request.caller) return request.caller
  throw credentialRequired(request.credentialError)
}
