/**
 * The in-process fan-out of delivered events to this instance's event streams (SSE). Delivery
 * (delivery.ts) reads each relayed event once per instance and hands it here in seq order; a
 * stream listens instead of polling the database. A listener must not block: it only queues.
 */
import type { DeliverableEvent } from '../db/repositories/outbox.ts'

export interface EventFeed {
  /** Calls `listener` with every event delivered from now on; returns how to stop. */
  subscribe(listener: (event: DeliverableEvent) => void): () => void
  /** The seq of the last event delivered on this instance: what a new live-only reader starts after. */
  lastDeliveredSeq(): number
}

export function createEventFeed(lastDeliveredSeq: () => number) {
  const listeners = new Set<(event: DeliverableEvent) => void>()
  const feed: EventFeed = {
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    lastDeliveredSeq,
  }
  return {
    feed,
    publish(event: DeliverableEvent) {
      for (const listener of listeners) listener(event)
    },
  }
}
