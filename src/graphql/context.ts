/**
 * What every resolver, loader and hook finds in Mercurius' context besides the app and the reply:
 * the caller, from the same bearer token REST uses, and what subscriptions and limits add to it.
 */
import type { Caller } from '../auth/caller.ts'
import type { SubscriptionRequest } from './subscriptions/websocket.ts'

declare module 'mercurius' {
  interface MercuriusContext {
    caller: Caller
    /** What this operation cost and what the caller has left: `extensions.cost` of the response. */
    cost?: CostReport
    /** On a subscription: ends the subscriber's connection because it fell too far behind. */
    closeAsTooSlow?: () => void
    /** On a subscription: whether its connection is still open (an event's loads stop retrying once it is not). */
    subscriptionOpen?: () => boolean
    /** On a subscription connection: admits a subscribe or throws its error (websocket.ts). */
    admitSubscription?: (id: string) => void
    /** On a subscription: the variables and operationName the client sent with operation `id`. */
    subscriptionRequest?: (id: string) => SubscriptionRequest | undefined
    /** On a subscription: its operation id (Mercurius sets it on each subscription's context). */
    id?: string | number
    /** On a subscription connection: the event id of the event each operation is resolving (event-replay.ts). */
    subscriptionEventIds?: Map<string, string>
  }
}

export interface CostReport {
  requestedQueryCost: number
  throttleStatus: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number }
}
