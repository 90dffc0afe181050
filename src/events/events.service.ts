/**
 * The event log (decisions §13, "One event log, every transport"): the outbox, its `seq` the public
 * event id, kept EVENTS_RETENTION, each event visible to the callers who may read its record
 * (event-visibility.ts). The list, the stream, GraphQL subscriptions' `after` and webhooks all read
 * it through `readAfter`, so they see the same events in the same order.
 */
import type { Kysely } from 'kysely'
import type { Event, EventType } from '../contract/contract-types.ts'
import type { DeliverableEvent, EventPayloads } from '../db/repositories/outbox.ts'
import { prunedThrough, RELAY_BATCH, relayOutboxBatch } from '../db/repositories/outbox.ts'
import type { Database } from '../db/schema.ts'
import { ApiError, badRequest, type ProblemLocation, validationFailed } from '../errors.ts'
import type { Caller } from '../auth/caller.ts'
import type { Page } from '../pagination/page.ts'
import { type CursorCodec, resumePosition } from '../pagination/cursor.ts'
import { audienceOf, type EventAudience } from './event-visibility.ts'
import { readEventLog } from './events.repository.ts'

export const EVENT_TYPES = [
  'order.created',
  'order.status_changed',
  'article.created',
  'comment.added',
] as const satisfies readonly EventType[]

/** An event id as a resume point: its seq. `0` is "from the start of the log". Below 2^53, so a number is exact. */
const EVENT_ID = /^(0|[1-9][0-9]{0,14})$/

const LIST = 'events'

/** The resume point that means "from the oldest event still kept" on every transport. */
const START_OF_LOG = 0

/** The public event of an outbox row, or undefined for one with no record to show (see EventPayloads). */
export function toEvent(event: Pick<DeliverableEvent, 'seq' | 'topic' | 'payload' | 'createdAt'>): Event | undefined {
  const id = String(event.seq)
  const created_at = event.createdAt.toISOString()
  // The payload is what recordEvent stored for this topic: its type is EventPayloads[topic], which the
  // outbox row (JSON read back) cannot carry, hence the cast.
  switch (event.topic) {
    case 'order.created':
    case 'order.status_changed': {
      const { order } = event.payload as EventPayloads['order.created']
      return order ? { id, type: event.topic, created_at, data: order } : undefined
    }
    case 'article.created': {
      const { article } = event.payload as EventPayloads['article.created']
      return article ? { id, type: event.topic, created_at, data: article } : undefined
    }
    case 'comment.added': {
      const { comment } = event.payload as EventPayloads['comment.added']
      return comment ? { id, type: event.topic, created_at, data: comment } : undefined
    }
  }
}

/** A resume point (`after`, `Last-Event-ID`, a subscription's `after`) as a seq; 400 naming `name` otherwise. */
export function parseEventId(raw: string, location: ProblemLocation, name: string): number {
  if (!EVENT_ID.test(raw))
    throw validationFailed([{ in: location, name, message: 'must be an event id (a decimal number, 0 for the start)' }])
  return Number(raw)
}

/** `types=a,b` as event types, undefined for all; an unknown or empty one is 400. */
export function parseEventTypes(raw: string | undefined, location: ProblemLocation, name: string): EventType[] | undefined {
  if (raw === undefined) return undefined
  const known: readonly string[] = EVENT_TYPES
  const types = raw.split(',')
  if (!types.every((type): type is EventType => known.includes(type))) {
    throw validationFailed([{ in: location, name, message: `must be a comma-separated list of ${EVENT_TYPES.join(', ')}` }])
  }
  // In the contract's order, so that equal filters make equal cursors.
  return EVENT_TYPES.filter((type) => types.includes(type))
}

export const eventsExpired = (after: number, horizon: number) =>
  new ApiError(
    'EVENTS_EXPIRED',
    `The events after ${after} are no longer kept (EVENTS_RETENTION); resume after ${horizon} or later, or list from the start of the log.`,
    { extensions: { after: String(after), resumeAfter: String(horizon) } },
  )

export interface EventsRead {
  /** The visible events read, oldest first. */
  events: Event[]
  /** The highest seq this read looked at (`after` when none): where the next read resumes. */
  lastSeq: number
  /** Whether the read reached the end of the log as it was then (fewer rows than the limit). */
  complete: boolean
}

/**
 * Numbers every event committed so far, waiting for the relay's lock (see relayOutboxBatch), batch
 * by batch until a batch is not full. The NOTIFY of each batch wakes live delivery as the relay's does.
 */
async function relayCommittedEvents(db: Kysely<Database>): Promise<void> {
  for (;;) {
    const batch = await db.transaction().execute((trx) => relayOutboxBatch(trx, { wait: true }))
    if (batch.count < RELAY_BATCH) return
  }
}

export function createEventsService({ db, cursors }: { db: Kysely<Database>; cursors: CursorCodec }) {
  /**
   * The events `audience` may see after seq `after`, oldest first, of `types` (all when
   * undefined), at most `limit` rows looked at. `after` 0 is the start of the log: the oldest
   * event still kept, whatever was pruned before it (decisions §13). EVENTS_EXPIRED when events
   * after a later `after` were pruned. The horizon is read after the events: a prune that removed
   * any of them committed before this read began, and so is seen by it.
   */
  async function readAfter(
    audience: EventAudience,
    after: number,
    options: { types?: readonly EventType[] | undefined; limit: number },
  ): Promise<EventsRead> {
    const read = await readDeliverableAfter(audience, after, options)
    return { events: read.rows.flatMap((row) => toEvent(row) ?? []), lastSeq: read.lastSeq, complete: read.complete }
  }

  /** As readAfter, with the outbox rows themselves (GraphQL subscriptions replay their payloads). */
  async function readDeliverableAfter(
    audience: EventAudience,
    after: number,
    options: { types?: readonly EventType[] | undefined; limit: number },
  ): Promise<{ rows: DeliverableEvent[]; lastSeq: number; complete: boolean }> {
    const query = { after, types: options.types, limit: options.limit }
    let read = await readEventLog(db, audience, query)
    if (read.unrelayed) {
      // Committed events the relay has not numbered yet, perhaps this caller's own write: number
      // them here, under the relay's lock, and read again, so that a write's events are in the log
      // by the time its answer was sent (decisions §13). A read that finds none pays nothing more.
      await relayCommittedEvents(db)
      read = await readEventLog(db, audience, query)
    }
    const rows = read.events
    const horizon = await prunedThrough(db)
    if (after !== START_OF_LOG && after < horizon) throw eventsExpired(after, horizon)
    return { rows, lastSeq: rows.at(-1)?.seq ?? after, complete: rows.length < options.limit }
  }

  return {
    readAfter,
    readDeliverableAfter,

    /** GET /events: a page of the caller's events, oldest first (envelope B). */
    async list(
      caller: Caller,
      query: { after?: string | undefined; types?: string | undefined; cursor?: string | undefined; limit: number },
    ): Promise<Page<Event>> {
      if (query.cursor !== undefined && query.after !== undefined) {
        throw badRequest('CURSOR_MISMATCH', 'Pass either `after` or `cursor`, not both.', [
          { in: 'query', name: 'after', message: 'conflicts with the cursor' },
          { in: 'query', name: 'cursor', message: 'conflicts with after' },
        ])
      }
      const requested = parseEventTypes(query.types, 'query', 'types')
      const position = resumePosition(
        cursors,
        LIST,
        query.cursor,
        { sort: undefined, filter: { types: requested?.join(',') } },
        { sort: 'id' },
      )
      const typesFilter = position.filter.types
      const types = typeof typesFilter === 'string' ? parseEventTypes(typesFilter, 'query', 'cursor') : undefined
      const after = position.after ? position.after[1] : parseEventId(query.after ?? '0', 'query', 'after')
      const read = await readAfter(audienceOf(caller), after, { types, limit: query.limit })
      const nextCursor = read.complete
        ? null
        : cursors.encode({ list: LIST, sort: 'id', filter: { types: typesFilter ?? null }, key: [read.lastSeq, read.lastSeq] })
      return { data: read.events, total: read.events.length, nextCursor }
    },
  }
}

export type EventsService = ReturnType<typeof createEventsService>
