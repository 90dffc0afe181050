/** All SQL of the event log's readers (the outbox itself is src/db/repositories/outbox.ts). */
import { type RawBuilder, sql } from 'kysely'
import type { EventTopic } from '../db/repositories/outbox.ts'
import { type DeliverableEvent, toDeliverableEvent } from '../db/repositories/outbox.ts'
import type { Executor } from '../db/executor.ts'
import { type EventAudience, visibleOwners } from './event-visibility.ts'

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
 * and whether any committed event awaits its seq: one statement. The events are read as ranges of
 * the log, one per owner the audience sees and type asked for, each on its index ((owner_id, seq),
 * (owner_id, topic, seq), (topic, seq), or seq alone: migration 0010), each at most `limit` long, and
 * merged by seq: the read costs what it returns, not the events of others it would walk past
 * (decisions §17). The unrelayed flag is outbox_unrelayed_idx (an empty partial index when the
 * relay has kept up).
 */
export async function readEventLog(
  db: Executor,
  audience: EventAudience,
  query: { after: number; types: readonly EventTopic[] | undefined; limit: number },
): Promise<VisibleEvents> {
  const { after, types, limit } = query
  const owners: Array<RawBuilder<boolean> | undefined> = (visibleOwners(audience) ?? [undefined]).map((owner) =>
    owner === undefined ? undefined : owner === null ? sql<boolean>`owner_id is null` : sql<boolean>`owner_id = ${owner}`,
  )
  // A type is a range of one value, as orders' status is, for the same reason (orders.repository.ts
  // filterConditions): PostgreSQL then keeps to the range's index.
  const topics: Array<RawBuilder<boolean> | undefined> = types
    ? types.map((topic) => sql<boolean>`topic between ${topic} and ${topic}`)
    : [undefined]
  const ranges = owners.flatMap((owner) =>
    topics.map((topic) => {
      const conditions = [owner, topic, sql<boolean>`seq > ${after}`].filter((condition) => condition !== undefined)
      // Ordered by its index's columns: within the range they are fixed, so this is seq order, and it
      // keeps PostgreSQL on that index. Ordered by seq alone, it may take the seq index (or the
      // owner's) and filter, expecting the owner's and the type's events to be spread evenly: the
      // events of no owner are never orders', so a customer's `types=order.status_changed` walked the
      // whole log.
      const columns = [owner && 'owner_id', topic && 'topic', 'seq'].filter((column) => column !== undefined)
      return sql`(select seq, topic, payload, owner_id, created_at from outbox where ${sql.join(conditions, sql` and `)}
        order by ${sql.join(columns.map((column) => sql.ref(column)))} limit ${limit})`
    }),
  )
  const merged =
    ranges.length === 1 ? ranges[0]! : sql`select * from (${sql.join(ranges, sql` union all `)}) as ranges order by seq limit ${limit}`
  // The flag is the left side, so it comes back even when no event does.
  const { rows } = await sql<{
    unrelayed: boolean
    seq: number | null
    topic: EventTopic | null
    payload: unknown
    owner_id: number | null
    created_at: Date | null
  }>`select log.unrelayed, event.* from (select exists (select from outbox where seq is null) as unrelayed) as log
    left join lateral (${merged}) as event on true order by event.seq`.execute(db)
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
