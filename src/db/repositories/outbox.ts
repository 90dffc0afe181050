/**
 * The transactional outbox (decisions §11): an event is written in the same transaction as the
 * change it reports, so a rolled-back change emits nothing and a committed one is never lost.
 */
import { sql } from 'kysely'
import type { Executor } from '../transaction.ts'

export type EventTopic = 'order.created' | 'order.status_changed' | 'article.created' | 'comment.added'

/** Relays LISTEN here: a NOTIFY is delivered when its transaction commits, and never if it rolls back. */
export const OUTBOX_CHANNEL = 'api_outbox'
/** Relayed events, fanned out to every instance. */
export const EVENTS_CHANNEL = 'api_events'

/** What the events channel carries: NOTIFY payloads are limited to 8000 bytes, event payloads are not. */
export interface RelayedEvent {
  id: number
  topic: EventTopic
}

export async function recordEvent(trx: Executor, topic: EventTopic, payload: Record<string, unknown>): Promise<void> {
  await trx.insertInto('outbox').values({ topic, payload: JSON.stringify(payload) }).execute()
  await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx)
}

const RELAY_LOCK = 4_242_002
const RELAY_BATCH = 100

/**
 * Publishes the oldest unpublished events, in id order, through `fanOut`. With the default
 * (NOTIFY on the events channel, in the same transaction that marks them published) every
 * instance receives each event exactly when — and only if — it is marked; a fan-out outside the
 * database (Redis) publishes before the commit, so an event may be delivered twice, never lost. One relay at a time across instances (an advisory lock), so events
 * go out in order. Returns how many were relayed.
 */
export type EventFanOut = (trx: Executor, event: RelayedEvent) => Promise<void>

/** PostgreSQL's own fan-out: delivered to every LISTENing instance when the relay commits. */
export const notifyFanOut: EventFanOut = async (trx, event) => {
  await sql`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(event)})`.execute(trx)
}

export async function relayOutboxBatch(trx: Executor, fanOut: EventFanOut = notifyFanOut): Promise<number> {
  const locked = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${RELAY_LOCK}) as locked`.execute(trx)
  if (!locked.rows[0]?.locked) return 0
  const rows = await trx
    .selectFrom('outbox')
    .select(['id', 'topic'])
    .where('published_at', 'is', null)
    .orderBy('id')
    .limit(RELAY_BATCH)
    .execute()
  for (const row of rows) await fanOut(trx, { id: row.id, topic: row.topic as EventTopic })
  if (rows.length > 0) {
    await trx
      .updateTable('outbox')
      .set({ published_at: sql<Date>`now()` as never })
      .where('id', '=', sql<number>`any(${sql.val(rows.map((row) => row.id))}::bigint[])`)
      .execute()
  }
  return rows.length
}

export async function findEventPayload(db: Executor, id: number): Promise<Record<string, unknown> | undefined> {
  const row = await db.selectFrom('outbox').select('payload').where('id', '=', id).executeTakeFirst()
  if (!row) return undefined
  return (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<string, unknown>
}

/** Published events are kept a day for inspection, then removed. */
export async function deletePublishedEvents(db: Executor, olderThanSeconds = 24 * 60 * 60): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('published_at', 'is not', null)
    .where('published_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSeconds})`)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
