/** Who is making a request, as established from a verified bearer token. */
export interface Caller {
  /** The token's `sub`: the user's id as a string, the key rate limits and idempotency keys use. */
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
