/** All SQL of the event log's readers (the outbox itself is src/db/repositories/outbox.ts). */
import { sql } from 'kysely'
import type { EventTopic } from '../db/repositories/outbox.ts'
import { type DeliverableEvent, toDeliverableEvent } from '../db/repositories/outbox.ts'
import type { Executor } from '../db/executor.ts'
import { type EventAudience, visibleWhere } from './event-visibility.ts'

export interface VisibleEvents {
  events: DeliverableEvent[]
  /**
   * Whether the log held committed events without a seq yet when this read began (in the same
   * snapshot as `events`): a reader must have them numbered and read again to see every event
   * committed before it (decisions §13).
   */
  unrelayed: boolean
}

/**
 * The events `audience` may see after seq `after`, oldest first, of `types` (all when undefined),
 * and whether any committed event awaits its seq: one statement, on outbox_seq_idx and
 * outbox_unrelayed_idx (an empty partial index when the relay has kept up).
 */
export async function readEventLog(
  db: Executor,
  audience: EventAudience,
  query: { after: number; types: readonly EventTopic[] | undefined; limit: number },
): Promise<VisibleEvents> {
  const { after, types, limit } = query
  let select = db
    .selectFrom('outbox')
    .select(['seq', 'topic', 'payload', 'owner_id', 'created_at'])
    .where('seq', '>', after)
    .where(visibleWhere(audience))
  if (types) select = select.where('topic', 'in', types)
  // The flag is the left side, so it comes back even when no event does.
  const rows = await db
    .selectFrom(sql<{ unrelayed: boolean }>`(select exists (select from outbox where seq is null) as unrelayed)`.as('log'))
    .leftJoinLateral(select.orderBy('seq').limit(limit).as('event'), (join) => join.onTrue())
    .select(['log.unrelayed', 'event.seq', 'event.topic', 'event.payload', 'event.owner_id', 'event.created_at'])
    .orderBy('event.seq')
    .execute()
  const events: DeliverableEvent[] = []
  for (const row of rows) {
    if (row.seq !== null && row.topic !== null && row.created_at !== null)
      events.push(toDeliverableEvent({ ...row, seq: row.seq, topic: row.topic, created_at: row.created_at }))
  }
  return { events, unrelayed: rows[0]?.unrelayed ?? false }
}

/** The events of readEventLog alone. */
export async function visibleEventsAfter(
  db: Executor,
  audience: EventAudience,
  query: { after: number; types: readonly EventTopic[] | undefined; limit: number },
): Promise<DeliverableEvent[]> {
  return (await readEventLog(db, audience, query)).events
}
