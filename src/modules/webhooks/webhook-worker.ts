/**
 * The delivery worker (decisions §13): turns the event log into signed POSTs, at least once, in
 * seq order per endpoint, on as many instances as run, none sending one attempt twice at once.
 *
 * Sharing: an instance leases an endpoint (webhooks.repository.ts, claimEndpoints: FOR UPDATE SKIP
 * LOCKED) and alone works on it until the lease ends: it fans the endpoint's new visible events
 * out into deliveries (through the event core's readAfter, so the visibility rule is the core's),
 * then attempts the head delivery, and the next while they succeed. A lease outlasts the longest
 * attempt, and every attempt renews it first, so two instances never attempt one delivery at once.
 *
 * Faults: a failed statement (the database is down) is logged and the lease left to expire; the
 * endpoint is claimed again once the database is back. Recording an attempt's outcome is tried
 * again a few times first, so that one failed statement does not send a delivery twice; a delivery
 * whose outcome could not be recorded at all is sent again (at least once; receivers deduplicate
 * on webhook-id). Nothing is in memory that the database does not also hold.
 */
import { randomUUID } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { AppConfig } from '../../config.ts'
import { lastRelayedSeq } from '../../db/repositories/outbox.ts'
import type { Database, WebhookEndpointRow } from '../../db/schema.ts'
import { ApiError } from '../../errors.ts'
import type { RunInBackground } from '../../events/background.ts'
import { audienceOf } from '../../events/event-visibility.ts'
import { parseEventTypes, type EventsService } from '../../events/events.service.ts'
import { claimEndpoints, fanOut, pendingDeliveries, recordFailure, recordSuccess, releaseLease, renewLease } from './webhooks.repository.ts'
import { sendWebhook } from './webhook-sender.ts'

/** Events read from the log per fan-out step. */
const FAN_OUT_BATCH = 200
/** Deliveries attempted per lease before the endpoint goes back to the queue (fairness). */
const DELIVERIES_PER_LEASE = 50
/** What a lease adds to the longest attempt: time for the statements around it. */
const LEASE_MARGIN_MS = 30_000
/**
 * The waits between tries to record an attempt's outcome. Four tries, each bounded by the database
 * work bound (statement timeout + 1 s, 6 s by default), and these waits stay inside LEASE_MARGIN_MS.
 */
const RECORD_RETRY_WAITS_MS = [100, 500, 2000]

/**
 * A new delivery's `webhook-id`: random, stored with the delivery (the same on every attempt and on
 * a redelivery) and so unique across databases and deployments (decisions §13).
 */
export const newWebhookId = () => `msg_${randomUUID().replaceAll('-', '')}`

/**
 * When to try again after `attempts` failed attempts, the first at `firstAttemptAt`; undefined when
 * that would be past `disableAfterMs` (give up, disable the endpoint).
 */
export function nextAttemptAt(config: AppConfig['webhooks'], attempts: number, firstAttemptAt: Date, now: Date): Date | undefined {
  const schedule = config.retrySchedule
  const wait = schedule[Math.min(attempts, schedule.length) - 1] ?? schedule.at(-1) ?? 0
  const next = new Date(now.getTime() + wait)
  return next.getTime() - firstAttemptAt.getTime() > config.disableAfterMs ? undefined : next
}

export interface WebhookWorkerOptions {
  db: Kysely<Database>
  events: Pick<EventsService, 'readAfter'>
  config: AppConfig['webhooks']
  log: FastifyBaseLogger
  /**
   * Runs each endpoint's pass outside any request (plugins/tracing.ts): a pass that attempted a
   * delivery is a root span of its own, `webhooks.deliver`.
   */
  background: RunInBackground
}

/** What one pass over an endpoint attempted. */
interface Attempts {
  succeeded: number
  failed: number
}

export function createWebhookWorker({ db, events, config, log, background }: WebhookWorkerOptions) {
  const owner = randomUUID()
  const leaseMs = config.timeoutMs + LEASE_MARGIN_MS
  const inFlight = new Set<Promise<void>>()
  /** The endpoints this instance is working on. */
  const busy = new Set<number>()
  const shutdown = new AbortController()
  // Every attempt under way listens for the shutdown: up to `concurrency` listeners, not a leak.
  setMaxListeners(0, shutdown.signal)
  let claiming = false
  let again = false

  /** Adds deliveries for the endpoint's events past its fan-out position, one batch. */
  async function fanOutFor(endpoint: WebhookEndpointRow): Promise<void> {
    // Read first: every event up to it is visible to the read below (seqs become visible in order).
    const relayed = await lastRelayedSeq(db)
    const audience = audienceOf({ userId: endpoint.owner_id, admin: endpoint.owner_admin, scopes: new Set(endpoint.owner_scopes) })
    const types = endpoint.types ? parseEventTypes(endpoint.types.join(','), 'body', 'types') : undefined
    let read: Awaited<ReturnType<EventsService['readAfter']>>
    try {
      read = await events.readAfter(audience, endpoint.after_seq, { types, limit: FAN_OUT_BATCH })
    } catch (error) {
      // Events past the retention are gone for every reader: carry on from the oldest kept.
      if (!(error instanceof ApiError) || error.code !== 'EVENTS_EXPIRED') throw error
      const resumeAfter = Number(error.extensions.resumeAfter)
      log.warn({ endpoint: endpoint.id, after: endpoint.after_seq, resumeAfter }, 'webhook endpoint missed pruned events')
      await db.transaction().execute((trx) => fanOut(trx, endpoint.id, owner, [], resumeAfter))
      return
    }
    const after = read.complete ? Math.max(relayed, read.lastSeq) : read.lastSeq
    if (after === endpoint.after_seq) return
    const deliveries = read.events.map((event) => ({
      seq: Number(event.id),
      type: event.type,
      webhookId: newWebhookId(),
      payload: JSON.stringify(event),
    }))
    await db.transaction().execute((trx) => fanOut(trx, endpoint.id, owner, deliveries, after))
  }

  /**
   * Records an attempt's outcome, trying again while the lease lasts: the attempt has been made, and
   * an outcome that is not recorded sends the delivery again (a duplicate the receiver must drop).
   * A statement that fails once (a connection cut, a pool wait past its bound on a busy machine) is
   * no reason for that; a database that stays away is, after RECORD_RETRY_WAITS_MS.
   */
  async function recordOutcome(record: () => Promise<unknown>): Promise<void> {
    for (const wait of [...RECORD_RETRY_WAITS_MS, undefined]) {
      try {
        await record()
        return
      } catch (error) {
        if (wait === undefined || shutdown.signal.aborted) throw error
        log.warn({ err: error, retryInMs: wait }, 'recording a webhook attempt failed; trying again')
        await sleep(wait, undefined, { signal: shutdown.signal }).catch(() => {})
      }
    }
  }

  /** Attempts the endpoint's due deliveries in seq order until one fails or none is due; counts them in `attempts`. */
  async function deliverFor(endpoint: WebhookEndpointRow, attempts: Attempts): Promise<void> {
    // Read once per lease: a redelivery requested meanwhile goes out on the next lease.
    for (const head of await pendingDeliveries(db, endpoint.id, DELIVERIES_PER_LEASE)) {
      if (shutdown.signal.aborted || head.next_attempt_at.getTime() > Date.now()) return
      if (!(await renewLease(db, endpoint.id, owner, leaseMs))) return
      const attemptedAt = new Date()
      const started = performance.now()
      const result = await sendWebhook(
        endpoint,
        { id: head.webhook_id, payload: head.payload },
        { timeoutMs: config.timeoutMs, allowPrivate: config.allowPrivate, signal: shutdown.signal },
      )
      // Abandoned by the shutdown: not an attempt to count; the next lease holder sends it.
      if (shutdown.signal.aborted) return
      const outcome = {
        responseStatus: result.status,
        error: result.error,
        attemptedAt,
        durationMs: Math.round(performance.now() - started),
        responseBody: result.body,
      }
      if (result.ok) {
        attempts.succeeded++
        await recordOutcome(() => db.transaction().execute((trx) => recordSuccess(trx, head.id, outcome)))
        continue
      }
      attempts.failed++
      const next = nextAttemptAt(config, head.attempts + 1, head.first_attempt_at ?? attemptedAt, new Date())
      await recordOutcome(() =>
        db.transaction().execute((trx) => recordFailure(trx, { id: head.id, endpointId: endpoint.id }, outcome, next)),
      )
      if (!next) log.warn({ endpoint: endpoint.id, delivery: head.id }, 'webhook endpoint disabled: deliveries kept failing')
      return
    }
  }

  async function serve(endpoint: WebhookEndpointRow): Promise<void> {
    await background('webhooks.deliver', async () => {
      const attempts: Attempts = { succeeded: 0, failed: 0 }
      let failure: unknown
      try {
        await fanOutFor(endpoint)
        await deliverFor(endpoint, attempts)
      } catch (error) {
        if (!shutdown.signal.aborted) {
          log.warn({ err: error, endpoint: endpoint.id }, 'webhook delivery failed; retrying later')
          failure = error
        }
      } finally {
        await releaseLease(db, endpoint.id, owner).catch(() => {})
      }
      // A pass that found nothing due is no span; a failed attempt is the receiver's answer, not an error of the pass.
      if (attempts.succeeded + attempts.failed === 0 && failure === undefined) return undefined
      return {
        attributes: {
          'webhook.endpoint.id': endpoint.id,
          'webhook.deliveries.succeeded': attempts.succeeded,
          'webhook.deliveries.failed': attempts.failed,
        },
        ...(failure === undefined ? {} : { error: failure }),
      }
    })
  }

  /** Claims endpoints with work while there is room; called on every wake-up, cheap when idle. */
  async function wake(): Promise<void> {
    if (shutdown.signal.aborted) return
    if (claiming) {
      again = true
      return
    }
    claiming = true
    try {
      do {
        again = false
        const room = config.concurrency - inFlight.size
        if (room <= 0) return
        let claimed: WebhookEndpointRow[]
        try {
          claimed = await claimEndpoints(db, owner, leaseMs, room, [...busy])
        } catch (error) {
          if (!shutdown.signal.aborted) log.warn({ err: error }, 'claiming webhook endpoints failed; retrying on the next wake-up')
          return
        }
        for (const endpoint of claimed) {
          busy.add(endpoint.id)
          const work: Promise<void> = serve(endpoint).finally(() => {
            busy.delete(endpoint.id)
            inFlight.delete(work)
            void wake()
          })
          inFlight.add(work)
        }
      } while (again && !shutdown.signal.aborted)
    } finally {
      claiming = false
    }
  }

  return {
    wake,
    /** Stops claiming, abandons attempts under way (their leases are released) and waits for them. */
    async stop(): Promise<void> {
      shutdown.abort()
      await Promise.allSettled([...inFlight])
    },
  }
}
