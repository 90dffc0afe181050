/**
 * Subscriptions that resume (decisions §13): with `after: ID` a subscription first replays the
 * events of its topic that its subscriber may read after that event id, from the event log, then
 * goes live, with no gap and no duplicate at the seam. It subscribes to the live topic before its
 * first read, so an event delivered meanwhile waits in the (bounded) queue, and skips every live
 * event whose seq it already replayed: seqs become visible in increasing order, so a complete read
 * plus everything delivered after the subscription is every event.
 *
 * Every event a subscription sends carries its id as `extensions.eventId`, the `after` to resume
 * with: the resolver records it for the operation, and the onSubscriptionResolution hook adds it.
 */
import type { ExecutionResult } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import type { EventType } from '../../contract/contract-types.ts'
import type { DeliverableEvent } from '../../db/repositories/outbox.ts'
import { audienceOf } from '../../events/event-visibility.ts'
import { parseEventId } from '../../events/events.service.ts'
import { subscriber } from '../resolving/caller.ts'
import { subscribeBounded } from '../../events/pubsub.ts'

/** Log rows read per round trip while replaying. */
const REPLAY_PAGE = 100

/** A live or replayed event as subscription resolvers see it: the recorded payload and the event id. */
const payloadOf = (event: DeliverableEvent) => ({ ...event.payload, eventId: String(event.seq) })

/**
 * The events of `topic` for a subscription resolver, after the event `after` when given (replayed
 * from the log, EVENTS_EXPIRED past the retention), then live. Checks run before anything is
 * subscribed: a bad `after` is BAD_USER_INPUT, an expired one EVENTS_EXPIRED.
 */
export async function subscribeAfter(
  context: MercuriusContext,
  topic: EventType,
  after: string | null | undefined,
): Promise<AsyncIterable<unknown>> {
  if (after === null || after === undefined) return subscribeBounded(context, topic)
  const afterSeq = parseEventId(after, 'argument', 'after')
  const audience = audienceOf(subscriber(context))
  const events = context.app.services.events
  const read = (from: number) => events.readDeliverableAfter(audience, from, { types: [topic], limit: REPLAY_PAGE })
  const live = await subscribeBounded(context, topic)
  let first: Awaited<ReturnType<typeof read>>
  try {
    first = await read(afterSeq)
  } catch (error) {
    await live.return?.()
    throw error
  }
  return (async function* replayThenLive() {
    let page = first
    let lastSeq = afterSeq
    try {
      for (;;) {
        for (const event of page.rows) yield payloadOf(event)
        lastSeq = page.lastSeq
        if (page.complete) break
        page = await read(lastSeq)
      }
      for await (const payload of live) {
        if (Number((payload as { eventId: string }).eventId) > lastSeq) yield payload
      }
    } finally {
      await live.return?.()
    }
  })()
}

/** Wraps a subscription field's resolve so that the event id it resolves is recorded for the operation. */
export function resolvingEvent<Payload extends { eventId?: string }, Result>(resolve: (payload: Payload) => Result) {
  return (payload: Payload, _args: unknown, context: MercuriusContext): Result => {
    if (payload.eventId !== undefined && context.id !== undefined) context.subscriptionEventIds?.set(String(context.id), payload.eventId)
    return resolve(payload)
  }
}

/** The onSubscriptionResolution hook: each event's message carries `extensions.eventId`. */
export async function addEventId(execution: ExecutionResult, context: MercuriusContext, id: string | number): Promise<void> {
  const eventId = context.subscriptionEventIds?.get(String(id))
  if (eventId === undefined) return
  context.subscriptionEventIds?.delete(String(id))
  execution.extensions = { ...execution.extensions, eventId }
}
