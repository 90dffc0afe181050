/**
 * The transactional outbox (decisions §11, §12): an event is written in the same transaction as
 * the change it reports, so a rolled-back change emits nothing and a committed one is never lost.
 *
 * Ids are taken at insert, and transactions commit in any order, so ids say nothing about which
 * event became visible first. The relay therefore gives each event its delivery order, `seq`,
 * under an advisory lock held until its transaction commits (see relayOutboxBatch); listeners read
 * "everything after the last seq I delivered", which can never skip an event that committed late.
 */
import { type RawBuilder, sql } from 'kysely'
import type { Article, Comment, EventType, Order } from '../../contract/contract-types.ts'
import type { Executor } from '../executor.ts'
import { PRUNE_BATCH } from '../prune-in-batches.ts'

/** The event types of the contract (openapi.yaml, EventType). */
export type EventTopic = EventType

/** What each event's payload carries: the record as REST returns it, and the ids subscriptions filter on. */
export interface EventPayloads {
  'order.created': { orderId: number; userId: number; order: Order }
  'order.status_changed': { orderId: number; userId: number; from: string; to: string; reason?: string; order: Order }
  // Events recorded before migration 0004 whose article was deleted since carry no `article`.
  'article.created': { articleId: number; authorId: number; article?: Article }
  'comment.added': { commentId: number; articleId: number; authorId: number; comment: Comment }
}

/** Relays LISTEN here: a NOTIFY is delivered when its transaction commits, and never if it rolls back. */
export const OUTBOX_CHANNEL = 'api_outbox'
/**
 * Listeners LISTEN here to wake up when events were relayed. The notification carries nothing a
 * listener relies on: it reads the events themselves from the outbox, so a missed notification
 * delays delivery until the next poll and never loses an event.
 */
export const EVENTS_CHANNEL = 'api_events'

/**
 * An event's row in the outbox, as a statement fragment (`insert … returning id`): a write that
 * records its event inside its own statement puts it in a CTE and wakes the relays with
 * `wakeRelaysAfter`. `ownerId`: the one user besides admins who may read it (an order's owner),
 * null when any valid token may (src/events/event-visibility.ts).
 */
export function eventRecord<Topic extends EventTopic>(
  topic: Topic,
  payload: EventPayloads[Topic],
  ownerId: number | null,
): RawBuilder<unknown> {
  return sql`insert into outbox (topic, payload, owner_id) values (${topic}, ${JSON.stringify(payload)}, ${ownerId}) returning id`
}

/**
 * An event's row made inside a write that is one statement (src/db/write.ts), from the row of the
 * steps `from` names: `payload` (jsonb) and `ownerId` are expressions over that row, which the statement
 * built (the record the event reports is only known there); what they hold is EventPayloads'
 * `topic`, as eventRecord's. No row in `from`, no event. A CTE body: `wakeRelaysAfter` wakes the relays.
 */
export function eventRecordFrom(
  topic: EventTopic,
  payload: RawBuilder<unknown>,
  ownerId: RawBuilder<number | null>,
  from: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`insert into outbox (topic, payload, owner_id) select ${topic}::text, ${payload}, ${ownerId} from ${from} returning id`
}

/**
 * The select that ends a statement whose CTE `recorded` is an eventRecord: the relays wake on
 * commit. The channel is a constant, written into the text: the select binds no value.
 */
export function wakeRelaysAfter(recorded: string): RawBuilder<unknown> {
  return sql`select pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '') as notified from ${sql.ref(recorded)}`
}

/**
 * Records the event and wakes the relays on commit, in one statement (one round trip fewer per
 * write); with `outcome` (a keyed write's stored outcome, src/db/write.ts's outcomeOf), that too.
 */
export async function recordEvent<Topic extends EventTopic>(
  trx: Executor,
  topic: Topic,
  payload: EventPayloads[Topic],
  ownerId: number | null,
  outcome?: RawBuilder<unknown>,
): Promise<void> {
  await sql`with recorded as (${eventRecord(topic, payload, ownerId)})${outcome ? sql`, stored_outcome as (${outcome})` : sql``}
  ${wakeRelaysAfter('recorded')}`.execute(trx)
}

/** The advisory lock that makes one relay at a time. */
export const RELAY_LOCK = 4_242_002
export const RELAY_BATCH = 100

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
 * every smaller seq that will ever exist. One relay at a time across instances. The background
 * relay finds the lock taken and returns at once (the holder will relay what is waiting); a reader
 * that found committed events without a seq (`wait`) waits for the lock instead, because the holder
 * may have begun before those events committed (decisions §13).
 */
export async function relayOutboxBatch(trx: Executor, options: { wait?: boolean } = {}): Promise<RelayedBatch> {
  if (options.wait) await sql`select pg_advisory_xact_lock(${RELAY_LOCK})`.execute(trx)
  else {
    const locked = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${RELAY_LOCK}) as locked`.execute(trx)
    if (!locked.rows[0]?.locked) return { count: 0, lastSeq: undefined }
  }
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
  /** Who may read it besides admins (null: any valid token). */
  ownerId: number | null
  createdAt: Date
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
    .select(['seq', 'topic', 'payload', 'owner_id', 'created_at'])
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute()
  return rows.map(toDeliverableEvent)
}

/** A row of the outbox as its readers see it (pg hands jsonb over parsed, PGlite as text in some paths). */
export function toDeliverableEvent(row: {
  seq: number | null
  topic: string
  payload: unknown
  owner_id: number | null
  created_at: Date
}): DeliverableEvent {
  return {
    seq: Number(row.seq),
    topic: row.topic as EventTopic,
    payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<string, unknown>,
    ownerId: row.owner_id,
    createdAt: row.created_at,
  }
}

/**
 * Prunes the event log by one batch: the oldest `limit` relayed events of those older than
 * `retentionMs` go (decisions §13, EVENTS_RETENTION; batches: §17), as a prefix of seqs, and
 * `event_log_horizon` moves to the highest seq pruned, in the same statement, so that a reader
 * resuming below it learns that it missed events (EVENTS_EXPIRED) rather than silently skipping
 * them. Unrelayed events are never pruned. How many it deleted: pruneInBatches runs it again
 * while it deletes a whole batch.
 */
export async function pruneEventLog(db: Executor, retentionMs: number, limit = PRUNE_BATCH): Promise<number> {
  const result = await sql<{ deleted: number }>`
    with cutoff as (
      select max(seq) as seq from outbox
      where published_at < now() - make_interval(secs => ${retentionMs / 1000})
    ), batch as (
      select seq from outbox where seq <= (select seq from cutoff) order by seq limit ${limit}
    ), deleted as (
      delete from outbox where seq in (select seq from batch) returning seq
    ), horizon as (
      update event_log_horizon set pruned_through = greatest(pruned_through, (select max(seq) from deleted))
      where exists (select from deleted)
      returning pruned_through
    )
    select (select count(*) from deleted)::int as deleted, (select count(*) from horizon)::int as moved`.execute(db)
  return Number(result.rows[0]?.deleted ?? 0)
}

/** The highest seq pruned so far: a reader resuming after an older event has missed some. */
export async function prunedThrough(db: Executor): Promise<number> {
  const row = await db.selectFrom('event_log_horizon').select('pruned_through').executeTakeFirst()
  return Number(row?.pruned_through ?? 0)
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
