/**
 * The transactional outbox (decisions §11, §12): an event is written in the same transaction as
 * the change it reports, so a rolled-back change emits nothing and a committed one is never lost.
 *
 * Ids are taken at insert, and transactions commit in any order, so ids say nothing about which
 * event became visible first. The relay therefore gives each event its delivery order, `seq`,
 * under an advisory lock held until its transaction commits (see relayOutboxBatch); listeners read
 * "everything after the last seq I delivered", which can never skip an event that committed late.
 */
import { sql } from 'kysely'
import type { Executor } from '../transaction.ts'
import { compiledStatement } from '../compiled-statement.ts'

export type EventTopic = 'order.created' | 'order.status_changed' | 'article.created' | 'comment.added'

/** Relays LISTEN here: a NOTIFY is delivered when its transaction commits, and never if it rolls back. */
export const OUTBOX_CHANNEL = 'api_outbox'
/**
 * Listeners LISTEN here to wake up when events were relayed. The notification carries nothing a
 * listener relies on: it reads the events themselves from the outbox, so a missed notification
 * delays delivery until the next poll and never loses an event.
 */
export const EVENTS_CHANNEL = 'api_events'

/** Records the event and wakes the relays on commit, in one statement (issue 13: one round trip fewer per write). */
const eventInsert = compiledStatement<never>(
  `with recorded as (insert into outbox (topic, payload) values ($1, $2) returning id) select pg_notify($3, '') as notified from recorded`,
)

export async function recordEvent(trx: Executor, topic: EventTopic, payload: Record<string, unknown>): Promise<void> {
  await eventInsert(trx, [topic, JSON.stringify(payload), OUTBOX_CHANNEL])
}

/** The advisory lock that makes one relay at a time. */
export const RELAY_LOCK = 4_242_002
const RELAY_BATCH = 100

export interface RelayedBatch {
  /** How many events this call relayed (0 also when another relay held the lock). */
  count: number
  /** The highest seq given, when any. */
  lastSeq: number | undefined
}

/**
 * Gives the oldest unrelayed events (up to a batch, in id order) the next delivery seqs and marks
 * them published, then NOTIFYs the events channel; all in the caller's transaction, which must
 * commit before another relay can take the lock. Because the advisory lock is released only after
 * the commit is visible, seqs become visible in increasing order: a reader that sees seq N sees
 * every smaller seq that will ever exist. One relay at a time across instances; a relay that finds
 * the lock taken returns at once (the holder will relay what is waiting).
 */
export async function relayOutboxBatch(trx: Executor): Promise<RelayedBatch> {
  const locked = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${RELAY_LOCK}) as locked`.execute(trx)
  if (!locked.rows[0]?.locked) return { count: 0, lastSeq: undefined }
  // nextval runs over the ids as the ordered subquery yields them, so seq follows id within a batch.
  const relayed = await sql<{ seq: number }>`
    with batch as materialized (
      select id, nextval('outbox_seq') as seq
      from (select id from outbox where seq is null order by id limit ${RELAY_BATCH}) as unrelayed
    )
    update outbox set seq = batch.seq, published_at = now()
    from batch
    where outbox.id = batch.id
    returning batch.seq`.execute(trx)
  const seqs = relayed.rows.map((row) => Number(row.seq))
  if (seqs.length === 0) return { count: 0, lastSeq: undefined }
  const lastSeq = Math.max(...seqs)
  await sql`select pg_notify(${EVENTS_CHANNEL}, ${String(lastSeq)})`.execute(trx)
  return { count: seqs.length, lastSeq }
}

export interface DeliverableEvent {
  seq: number
  topic: EventTopic
  payload: Record<string, unknown>
}

/** The highest seq relayed so far (0 when none is kept): where a new listener starts. */
export async function lastRelayedSeq(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst()
  return Number(row?.seq ?? 0)
}

/** Relayed events after `afterSeq`, in delivery order, with their payloads: one statement. */
export async function relayedEventsAfter(db: Executor, afterSeq: number, limit: number): Promise<DeliverableEvent[]> {
  const rows = await db
    .selectFrom('outbox')
    .select(['seq', 'topic', 'payload'])
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute()
  return rows.map((row) => ({
    seq: Number(row.seq),
    topic: row.topic as EventTopic,
    payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<string, unknown>,
  }))
}

/** Published events are kept a day (a listener that lost its connection catches up from them), then removed. */
export async function deletePublishedEvents(db: Executor, olderThanSeconds = 24 * 60 * 60): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('published_at', 'is not', null)
    .where('published_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSeconds})`)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

export interface OutboxBacklog {
  /** Events committed but not yet relayed. */
  unpublished: number
  /** Age of the oldest of them in seconds, 0 when there is none. */
  oldestAgeSeconds: number
}

/** What the relay has yet to do: one index scan (outbox_unpublished_idx), for the metrics scrape. */
export async function outboxBacklog(db: Executor): Promise<OutboxBacklog> {
  const result = await sql<{ unpublished: number; oldest_age: number | null }>`
    select count(*)::int as unpublished, extract(epoch from now() - min(created_at))::float8 as oldest_age
    from outbox where published_at is null`.execute(db)
  const row = result.rows[0]
  return { unpublished: Number(row?.unpublished ?? 0), oldestAgeSeconds: Math.max(0, Number(row?.oldest_age ?? 0)) }
}
