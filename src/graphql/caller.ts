/** Who is asking: the caller a resolver acts for, from Mercurius' context. */
import type { MercuriusContext } from 'mercurius'
import type { Caller } from '../auth/caller.ts'
import { unauthenticated } from '../errors.ts'

export function callerOf(context: MercuriusContext): Caller {
  return context.caller
}

/** The caller of a subscription: its connection had to present a valid credential. */
export function subscriber(context: MercuriusContext): Caller {
  if (!context.caller) throw unauthenticated('Send {"Authorization": "Bearer <token>"} in connection_init.', false)
  return context.caller
}
