/**
 * Events from the transactional outbox to live subscribers, on one instance or many (decisions
 * §11, §12): every committed event reaches every connected subscriber once, in delivery order.
 *
 * Relay (one at a time across instances): gives unrelayed events their delivery `seq` and
 * NOTIFYs the events channel, in one transaction (see relayOutboxBatch); with Redis it also
 * publishes a wake-up there after the commit. It runs when a write NOTIFYs the outbox channel, at
 * start and every second, so events committed by an instance that died before relaying are
 * relayed by the next one.
 *
 * Delivery (every instance): remembers the last seq it handed to its GraphQL pubsub and, on each
 * wake-up, reads the events after it, payloads included, in one statement, publishes them in
 * order and only then moves on. Wake-ups: a NOTIFY on the events channel, a Redis message, the
 * listener (re)connecting, and a one-second timer. None of them carries an event, so a missed
 * one only delays delivery; a failed read changes nothing and is repeated at the next wake-up.
 *
 * When connections die:
 * - the LISTEN connection (PostgreSQL; a client of its own, `api-events-listener`): reconnects
 *   with backoff (100 ms doubling to 5 s), LISTENs again and catches up. Meanwhile the timer keeps
 *   delivering through the pool, a second late at most. A heartbeat every 5 s ends a connection
 *   that stopped answering (a network cut sends no error), so it is reopened too.
 * - the pool (the database restarts): reads and relays fail and are retried every second;
 *   `/readyz` answers 503 meanwhile (see `unavailable`) and the backlog is delivered on recovery.
 * - Redis: only a wake-up path; ioredis reconnects and re-subscribes by itself, a failed publish
 *   is logged and the NOTIFY and the timer still wake every instance. Instances with and without
 *   REDIS_URL on one database therefore deliver the same events.
 * PGlite delivers NOTIFY in-process: nothing to reconnect, and the timer runs the same way.
 */
import fp from 'fastify-plugin'
import { Kysely, PostgresDialect } from 'kysely'
import { PGliteDialect } from '../db/pglite-dialect.ts'
import pg from 'pg'
import { setTimeout as sleep } from 'node:timers/promises'
import { deleteExpiredOutcomes } from '../db/repositories/idempotency-keys.ts'
import {
  deletePublishedEvents,
  EVENTS_CHANNEL,
  lastRelayedSeq,
  OUTBOX_CHANNEL,
  relayedEventsAfter,
  relayOutboxBatch,
} from '../db/repositories/outbox.ts'
import type { Database } from '../db/schema.ts'

export const REDIS_EVENTS_CHANNEL = 'api:events'
/** How the listening connection names itself in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'api-events-listener'

const POLL_MS = 1000
const PRUNE_EVERY_TICKS = 60
const HEARTBEAT_EVERY_TICKS = 5
const HEARTBEAT_TIMEOUT_MS = 2000
const LISTENER_CONNECT_TIMEOUT_MS = 2000
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5000
const DELIVERY_BATCH = 500
/** How long catch-up may go without succeeding before the instance reports itself unready. */
const STALL_GRACE_MS = 3000
const REDIS_SUBSCRIBE_WAIT_MS = 2000

export interface EventDelivery {
  /** Why this instance cannot deliver events now, or undefined while it can (`/readyz`). */
  unavailable(): string | undefined
  /** The seq of the last event handed to this instance's subscribers. */
  lastDeliveredSeq(): number
}

declare module 'fastify' {
  interface FastifyInstance {
    eventDelivery: EventDelivery
  }
}

export default fp<{ relay: boolean }>(
  async function events(app, options) {
    const { url, pool, pglite } = app.database
    // Delivery reads through the same database, but not through app.db's statement log: that log
    // is what a request ran (tests count it), and this background polling is no request's work.
    // Never destroyed: destroying it would close the shared pool or PGlite.
    const reader = pool
      ? new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
      : new Kysely<Database>({ dialect: new PGliteDialect({ pglite: pglite! }) })

    let closing = false

    // ---- Delivery -------------------------------------------------------------------------
    // Events relayed before this instance started had no subscriber here to reach.
    let lastDelivered = await lastRelayedSeq(reader)
    let delivering: Promise<void> | undefined
    let deliverAgain = false
    /** Since when the oldest wake-up not yet answered by a successful read has been waiting. */
    let stalledSince: number | undefined
    /** The first wake-up that came while a read was under way (that read may have missed its events). */
    let againSince: number | undefined
    let lastReadFailed = false
    let listenerUp = !url

    const deliver = (): Promise<void> => {
      if (closing) return Promise.resolve()
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
                await app.graphql.pubsub.publish({ topic: event.topic, payload: event.payload })
                lastDelivered = event.seq
              }
            } while (events.length === DELIVERY_BATCH && !closing)
            lastReadFailed = false
            // Every wake-up before this read began is answered; one that came during it is not yet.
            stalledSince = againSince
          } catch (error) {
            // Nothing was skipped: lastDelivered still names the last event published. The next
            // wake-up (the timer's, within a second) reads again from there.
            lastReadFailed = true
            if (!closing) app.log.warn({ err: error, lastDelivered }, 'event delivery failed; retrying on the next wake-up')
            break
          }
        } while (deliverAgain && !closing)
      })().finally(() => {
        delivering = undefined
      })
      return delivering
    }

    app.decorate('eventDelivery', {
      unavailable() {
        if (stalledSince === undefined) return undefined
        if (lastReadFailed && !listenerUp) return 'the event listener is disconnected and catching up from the outbox fails'
        const stalledMs = Date.now() - stalledSince
        if (stalledMs > STALL_GRACE_MS) return `catching up from the outbox has not succeeded for ${stalledMs} ms`
        return undefined
      },
      lastDeliveredSeq: () => lastDelivered,
    } satisfies EventDelivery)

    // ---- Relay ----------------------------------------------------------------------------
    let relaying: Promise<void> | undefined
    let relayAgain = false
    const relay = (): Promise<void> => {
      if (!options.relay || closing) return Promise.resolve()
      if (relaying) {
        relayAgain = true
        return relaying
      }
      relaying = (async () => {
        do {
          relayAgain = false
          try {
            for (;;) {
              const batch = await app.db.transaction().execute((trx) => relayOutboxBatch(trx))
              if (batch.count === 0) break
              // Committed: the NOTIFY went out with the commit. This instance need not wait for it.
              void deliver()
              wakeThroughRedis(batch.lastSeq)
            }
          } catch (error) {
            if (!closing) app.log.warn({ err: error }, 'outbox relay failed; retrying on the next tick')
          }
        } while (relayAgain && !closing)
      })().finally(() => {
        relaying = undefined
      })
      return relaying
    }

    // ---- Redis: a second wake-up path, never the only one ---------------------------------
    const redis = app.redis
    const wakeThroughRedis = (lastSeq: number | undefined) => {
      // Not awaited, and skipped while Redis is away: the NOTIFY already woke every instance.
      if (redis?.status !== 'ready') return
      redis.publish(REDIS_EVENTS_CHANNEL, String(lastSeq)).catch((error: unknown) => {
        if (!closing) app.redisFailedOpen('event wake-ups', error)
      })
    }
    const stopListening: Array<() => Promise<void>> = []
    if (redis) {
      const subscriber = redis.duplicate()
      // Emitted for every failed reconnection attempt while Redis is away: throttled like the other features' warnings.
      subscriber.on('error', (error) => app.redisFailedOpen('event wake-ups', error))
      subscriber.on('message', () => void deliver())
      // After a reconnect (ioredis re-subscribes by itself) wake-ups may have been missed.
      subscriber.on('ready', () => void deliver())
      const subscribed = subscriber.subscribe(REDIS_EVENTS_CHANNEL).catch((error: unknown) => {
        app.log.warn({ err: error }, 'subscribing to Redis event wake-ups failed; NOTIFY and polling still deliver')
      })
      // Starting does not wait on Redis for long: events do not depend on it.
      await Promise.race([subscribed, sleep(REDIS_SUBSCRIBE_WAIT_MS, undefined, { ref: false })])
      stopListening.push(async () => {
        subscriber.disconnect()
      })
    }

    // ---- The LISTEN connection --------------------------------------------------------------
    let listener: { client: pg.Client; drop: (error: unknown) => void } | undefined
    let reconnectDelay = RECONNECT_MIN_MS
    let reconnectTimer: NodeJS.Timeout | undefined

    const scheduleReconnect = () => {
      if (reconnectTimer || closing) return
      const delay = reconnectDelay
      reconnectDelay = Math.min(reconnectDelay * 2, RECONNECT_MAX_MS)
      reconnectTimer = setTimeout(() => {
        reconnectTimer = undefined
        void connectListener()
      }, delay)
    }

    const connectListener = async (): Promise<void> => {
      // A connection of its own, outside the pool: it stays LISTENing for the instance's lifetime.
      const client = new pg.Client({
        connectionString: url,
        application_name: LISTENER_APPLICATION_NAME,
        connectionTimeoutMillis: LISTENER_CONNECT_TIMEOUT_MS,
        keepAlive: true,
      })
      let lost = false
      const onLost = (error?: unknown) => {
        if (lost) return
        lost = true
        if (listener?.client === client) listener = undefined
        listenerUp = false
        client.end().catch(() => {})
        if (closing) return
        app.log.warn({ err: error, retryInMs: reconnectDelay }, 'event listener connection lost; reconnecting')
        scheduleReconnect()
      }
      client.on('error', onLost)
      client.on('end', () => onLost(new Error('event listener connection ended')))
      client.on('notification', (notification) => {
        if (notification.channel === OUTBOX_CHANNEL) void relay()
        else if (notification.channel === EVENTS_CHANNEL) void deliver()
      })
      try {
        await client.connect()
        await client.query(`LISTEN ${EVENTS_CHANNEL}; LISTEN ${OUTBOX_CHANNEL}`)
      } catch (error) {
        onLost(error)
        return
      }
      if (closing || lost) {
        await client.end().catch(() => {})
        return
      }
      listener = { client, drop: onLost }
      listenerUp = true
      reconnectDelay = RECONNECT_MIN_MS
      // What was relayed (or committed) while no listener was there is picked up now.
      void deliver()
      void relay()
    }

    const heartbeat = async () => {
      const current = listener
      if (!current) return
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('event listener did not answer its heartbeat')), HEARTBEAT_TIMEOUT_MS)
      })
      try {
        await Promise.race([current.client.query('select 1'), timeout])
      } catch (error) {
        if (!closing) current.drop(error)
      } finally {
        clearTimeout(timer)
      }
    }

    if (url) {
      await connectListener()
      stopListening.push(async () => {
        clearTimeout(reconnectTimer)
        await listener?.client.end()
      })
    } else if (pglite) {
      stopListening.push(await pglite.listen(EVENTS_CHANNEL, () => void deliver()))
      stopListening.push(await pglite.listen(OUTBOX_CHANNEL, () => void relay()))
    }

    // ---- The timer: relay, deliver, housekeeping --------------------------------------------
    let ticks = 0
    const prune = async () => {
      try {
        await deletePublishedEvents(app.db)
        await deleteExpiredOutcomes(app.db)
      } catch (error) {
        if (!closing) app.log.warn({ err: error }, 'pruning failed; retrying on a later tick')
      }
    }
    const timer = setInterval(() => {
      ticks++
      void relay()
      void deliver()
      if (ticks % HEARTBEAT_EVERY_TICKS === 0) void heartbeat()
      if (options.relay && ticks % PRUNE_EVERY_TICKS === 0) void prune()
    }, POLL_MS)
    timer.unref()
    app.addHook('onReady', async () => {
      void relay()
    })
    app.addHook('preClose', async () => {
      closing = true
      clearInterval(timer)
      await relaying
      await delivering
      // The database may already be gone (a test closes it first); nothing is left to stop then.
      for (const stop of stopListening)
        await Promise.resolve()
          .then(stop)
          .catch(() => {})
    })
  },
  { name: 'events', dependencies: ['db', 'graphql', 'redis'] },
)
