/**
 * Delivery (every instance): remembers the last seq it handed to its GraphQL pubsub and, on each
 * wake-up, reads the events after it, payloads included, in one statement, publishes them in
 * order and only then moves on. None of the wake-ups carries an event, so a missed one only
 * delays delivery; a failed read changes nothing and is repeated at the next wake-up.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { type DeliverableEvent, lastRelayedSeq, relayedEventsAfter } from '../db/repositories/outbox.ts'
import type { Database } from '../db/schema.ts'

const DELIVERY_BATCH = 500
/** How long catch-up may go without succeeding before the instance reports itself unready. */
const STALL_GRACE_MS = 3000

export interface EventDelivery {
  /** Why this instance cannot deliver events now, or undefined while it can (`/readyz`). */
  unavailable(): string | undefined
  /**
   * `unavailable()` after reading the outbox once more when it says no: readiness follows the
   * database the moment it answers again, not the next wake-up (the timer's, or the listener's
   * once its reconnection backoff ends).
   */
  recheck(): Promise<string | undefined>
  /** The seq of the last event handed to this instance's subscribers. */
  lastDeliveredSeq(): number
}

export interface EventDeliveryOptions {
  /** Reads the outbox outside the request statement log. */
  reader: Kysely<Database>
  /** Hands one event to this instance's live readers (GraphQL subscriptions, event streams), in seq order. */
  publish: (event: DeliverableEvent) => Promise<void>
  log: FastifyBaseLogger
  isClosing: () => boolean
  /** Whether a LISTEN connection is up (or none is needed): readiness tolerates failed reads while it is. */
  listenerUp: () => boolean
  /** A read succeeded after failing: the database is back (the listener reconnects at once). */
  onRecovered?: () => void
  /** Runs a delivery outside every trace (tracing on): it is no request's work, not even the probe's that asked for it. */
  outsideTraces?: (deliver: () => Promise<void>) => Promise<void>
}

export async function createEventDelivery(options: EventDeliveryOptions) {
  const { reader, log, isClosing } = options
  // Events relayed before this instance started had no subscriber here to reach.
  let lastDelivered = await lastRelayedSeq(reader)
  let delivering: Promise<void> | undefined
  let deliverAgain = false
  /** Since when the oldest wake-up not yet answered by a successful read has been waiting. */
  let stalledSince: number | undefined
  /** The first wake-up that came while a read was under way (that read may have missed its events). */
  let againSince: number | undefined
  let lastReadFailed = false

  /** A wake-up: reads and publishes what was relayed since the last event delivered. */
  const deliverNow = (): Promise<void> => {
    if (isClosing()) return Promise.resolve()
    if (delivering) {
      deliverAgain = true
      againSince ??= Date.now()
      return delivering
    }
    stalledSince ??= Date.now()
    delivering = (async () => {
      do {
        deliverAgain = false
        againSince = undefined
        try {
          let events: Awaited<ReturnType<typeof relayedEventsAfter>>
          do {
            events = await relayedEventsAfter(reader, lastDelivered, DELIVERY_BATCH)
            for (const event of events) {
              await options.publish(event)
              lastDelivered = event.seq
            }
          } while (events.length === DELIVERY_BATCH && !isClosing())
          if (lastReadFailed) options.onRecovered?.()
          lastReadFailed = false
          // Every wake-up before this read began is answered; one that came during it is not yet.
          stalledSince = againSince
        } catch (error) {
          // Nothing was skipped: lastDelivered still names the last event published. The next
          // wake-up (the timer's, within a second) reads again from there.
          lastReadFailed = true
          if (!isClosing()) log.warn({ err: error, lastDelivered }, 'event delivery failed; retrying on the next wake-up')
          break
        }
      } while (deliverAgain && !isClosing())
    })().finally(() => {
      delivering = undefined
    })
    return delivering
  }
  const { outsideTraces } = options
  const deliver = outsideTraces ? () => outsideTraces(deliverNow) : deliverNow

  const status: EventDelivery = {
    unavailable() {
      if (stalledSince === undefined) return undefined
      if (lastReadFailed && !options.listenerUp()) return 'the event listener is disconnected and catching up from the outbox fails'
      const stalledMs = Date.now() - stalledSince
      if (stalledMs > STALL_GRACE_MS) return `catching up from the outbox has not succeeded for ${stalledMs} ms`
      return undefined
    },
    async recheck() {
      if (status.unavailable() === undefined) return undefined
      await deliver()
      return status.unavailable()
    },
    lastDeliveredSeq: () => lastDelivered,
  }

  return {
    deliver,
    status,
    /** Settles once the delivery under way (if any) has ended. */
    settled: () => delivering,
  }
}
