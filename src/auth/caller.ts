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

export const SCOPES = ['orders:read', 'orders:write', 'articles:write', 'admin'] as const
export type Scope = (typeof SCOPES)[number]
