/**
 * Who sees which event (decisions §2 and §13), in one place for every reader of the event log: the
 * list, the stream's replay and webhooks read many events through `visibleOwners` (the owners whose
 * events a read takes, each as a range of the log: events.repository.ts); live delivery checks one
 * event with `canSee`. Both read the same `EventAudience`, so they cannot disagree
 * (test/modules/events/event-log.test.ts runs both over the same events).
 *
 * An event carries `owner_id`: the one user besides admins who may read its record (an order's
 * owner), or null when any valid token may (articles and comments). A caller sees an event when it
 * is an admin, when the event has no owner, or when it owns it and may read orders (the scopes the
 * contracts require of getOrder): the rules of GET /orders/{id} and GET /articles.
 */
import type { Caller } from '../auth/caller.ts'
import { permits } from '../auth/policy.ts'

export interface EventAudience {
  /** An admin: every event. */
  readonly everything: boolean
  /** Whose owned events are visible besides the ownerless ones (the caller, when it may read orders); undefined: none. */
  readonly owner: number | undefined
}

/** What a caller may read of the log. A webhook endpoint keeps its owner's id, admin flag and scopes, so this answers for it too. */
export function audienceOf(caller: Pick<Caller, 'userId' | 'admin' | 'scopes'>): EventAudience {
  return { everything: caller.admin, owner: permits(caller, 'getOrder') ? caller.userId : undefined }
}

/** One event (live delivery): whether `audience` sees an event owned by `ownerId`. */
export function canSee(audience: EventAudience, ownerId: number | null): boolean {
  return audience.everything || ownerId === null || ownerId === audience.owner
}

/**
 * Many events (a read of the outbox): `canSee` as the owners whose events `audience` sees (null:
 * the events of no owner), or undefined for every event. A reader takes each owner's events as a
 * range of its own, so that it reads no event it may not see (decisions §17).
 */
export function visibleOwners(audience: EventAudience): Array<number | null> | undefined {
  if (audience.everything) return undefined
  return audience.owner === undefined ? [null] : [null, audience.owner]
}
