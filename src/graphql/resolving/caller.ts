/** Who is asking: the caller a resolver acts for, from Mercurius' context. */
import type { MercuriusContext } from 'mercurius'
import type { Caller } from '../../auth/caller.ts'
import { credentialRequired } from '../../errors.ts'

export function callerOf(context: MercuriusContext): Caller {
  return context.caller
}

/** The caller of a subscription: its connection had to present a valid credential. */
export function subscriber(context: MercuriusContext): Caller {
  if (!context.caller) throw credentialRequired(undefined, 'connection_init')
  return context.caller
}
