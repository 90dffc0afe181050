/**
 * Who sees which event (decisions §2 and §13), in one place for every reader of the event log: the
 * list, the stream's replay and webhooks read many events through `visibleWhere` (SQL); live
 * delivery checks one event with `canSee`. Both read the same `EventAudience`, so they cannot
 * disagree (test/modules/events/event-visibility.test.ts runs both over the same events).
 *
 * An event carries `owner_id`: the one user besides admins who may read its record (an order's
 * owner), or null when any valid token may (articles and comments). A caller sees an event when it
 * is an admin, when the event has no owner, or when it owns it and may read orders (the scopes the
 * contracts require of getOrder): the rules of GET /orders/{id} and GET /articles.
 */
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Caller } from '../auth/caller.ts'
import { permits } from '../auth/policy.ts'
import type { Database } from '../db/schema.ts'

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

/** Many events (a read of the outbox): `canSee` as a where clause. */
export function visibleWhere(audience: EventAudience) {
  return (eb: ExpressionBuilder<Database, 'outbox'>): Expression<SqlBool> => {
    if (audience.everything) return eb.lit(true)
    const ownerless = eb('outbox.owner_id', 'is', null)
    return audience.owner === undefined ? ownerless : eb.or([ownerless, eb('outbox.owner_id', '=', audience.owner)])
  }
}
