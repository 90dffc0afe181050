/**
 * Relay (one at a time across instances): gives unrelayed events their delivery `seq` and NOTIFYs
 * the events channel, in one transaction (see relayOutboxBatch); then wakes this instance's
 * delivery and, with Redis, the other instances through it. It runs when a write NOTIFYs the
 * outbox channel, at start and every second, so events committed by an instance that died before
 * relaying are relayed by the next one. A reader of the event log that is faster than it numbers
 * what it finds waiting itself, under the same lock (events.service.ts, decisions §13).
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RunInBackground } from './background.ts'
import { relayOutboxBatch } from '../db/repositories/outbox.ts'
import type { Database } from '../db/schema.ts'

export interface OutboxRelayOptions {
  db: Kysely<Database>
  /** Whether this instance relays at all (the `relay` option of the events plugin). */
  enabled: boolean
  /** Wakes this instance's delivery. */
  deliver: () => Promise<void>
  /** Wakes the other instances' delivery after a batch committed. */
  wakeOthers: (lastSeq: number | undefined) => void
  log: FastifyBaseLogger
  isClosing: () => boolean
  /** Runs each pass outside any request (plugins/tracing.ts): a pass that relayed is a span of its own. */
  background: RunInBackground
}

export function createOutboxRelay(options: OutboxRelayOptions) {
  const { log, isClosing } = options
  let relaying: Promise<void> | undefined
  let relayAgain = false

  const relay = (): Promise<void> => {
    if (!options.enabled || isClosing()) return Promise.resolve()
    if (relaying) {
      relayAgain = true
      return relaying
    }
    relaying = (async () => {
      do {
        relayAgain = false
        await options.background('events.relay', async () => {
          let relayed = 0
          try {
            for (;;) {
              const batch = await options.db.transaction().execute((trx) => relayOutboxBatch(trx))
              if (batch.count === 0) break
              relayed += batch.count
              // Committed: the NOTIFY went out with the commit. This instance need not wait for it.
              void options.deliver()
              options.wakeOthers(batch.lastSeq)
            }
          } catch (error) {
            if (isClosing()) return undefined
            log.warn({ err: error }, 'outbox relay failed; retrying on the next tick')
            return { attributes: { 'events.relayed': relayed }, error }
          }
          // The poll that found nothing is no span.
          return relayed > 0 ? { attributes: { 'events.relayed': relayed } } : undefined
        })
      } while (relayAgain && !isClosing())
    })().finally(() => {
      relaying = undefined
    })
    return relaying
  }

  return {
    relay,
    /** Settles once the relay under way (if any) has ended. */
    settled: () => relaying,
  }
}
