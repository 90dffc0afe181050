/**
 * Events from the transactional outbox to live subscribers, on one instance or many (decisions
 * §11, §12): every committed event reaches every connected subscriber once, in delivery order.
 * This plugin wires the parts of src/events/ together and owns their lifetime:
 *
 * - relay (src/events/relay.ts): numbers committed events and NOTIFYs the events channel;
 * - delivery (src/events/delivery.ts): publishes relayed events to this instance's GraphQL pubsub;
 * - wake-ups: a NOTIFY on the events channel (src/events/listener.ts; PGlite delivers NOTIFY
 *   in-process), a Redis message (src/events/redis-wakeups.ts), the listener (re)connecting, and
 *   a one-second timer, which also prunes the event log past EVENTS_RETENTION (once a minute, on
 *   relaying instances) and expired idempotency outcomes.
 *
 * When connections die:
 * - the LISTEN connection: reconnects with backoff and catches up; the timer keeps delivering
 *   through the pool meanwhile (see listener.ts), and the first read that succeeds again ends the
 *   backoff (the database is back: the listener reconnects at once).
 * - the pool (the database restarts): reads and relays fail and are retried every second;
 *   `/readyz` answers 503 meanwhile (see EventDelivery.unavailable) and the backlog is delivered
 *   on recovery; a probe reads again itself (EventDelivery.recheck), so that readiness returns
 *   with the database, not up to a tick later.
 * - Redis: only a wake-up path (see redis-wakeups.ts).
 * PGlite delivers NOTIFY in-process: nothing to reconnect, and the timer runs the same way.
 *
 * None of this is any request's work, even when a request's write woke it (PGlite's NOTIFY runs its
 * listeners in the writer's context): with tracing on, the relay and housekeeping are spans of
 * their own and delivery runs outside every trace (plugins/tracing.ts, `background`).
 */
import fp from 'fastify-plugin'
import type { AppConfig } from '../config.ts'
import { deleteExpiredOutcomes } from '../db/repositories/idempotency-keys.ts'
import { EVENTS_CHANNEL, OUTBOX_CHANNEL, pruneEventLog } from '../db/repositories/outbox.ts'
import { pruneInBatches } from '../db/prune-in-batches.ts'
import { createEventDelivery, type EventDelivery } from './delivery.ts'
import { createEventFeed, type EventFeed } from './event-feed.ts'
import { createOutboxListener } from './listener.ts'
import { redisWakeUpPublisher, subscribeToRedisWakeUps } from './redis-wakeups.ts'
import { createOutboxRelay } from './relay.ts'
import { untracedBackground } from './background.ts'
import { createEventStreams, type EventStreams } from './event-streams.ts'

const POLL_MS = 1000
const PRUNE_EVERY_TICKS = 60
const HEARTBEAT_EVERY_TICKS = 5

declare module 'fastify' {
  interface FastifyInstance {
    eventDelivery: EventDelivery
    /** Delivered events, for this instance's event streams (src/events/event-streams.ts). */
    eventFeed: EventFeed
    /** This instance's open event streams (GET /events/stream). */
    eventStreams: EventStreams
  }
}

export interface EventsPluginOptions {
  relay: boolean
  /**
   * EVENTS_DATABASE_URL: where to LISTEN; `false` for nowhere (the poll delivers); undefined for
   * the database's own URL on a direct connection, nowhere behind a pooler.
   */
  listenUrl?: string | false | undefined
  events: AppConfig['events']
}

export default fp<EventsPluginOptions>(
  async function events(app, options) {
    const { pglite } = app.database
    // Where to LISTEN: EVENTS_DATABASE_URL when set; otherwise DATABASE_URL on a direct
    // connection (fast delivery), and nowhere behind a pooler in transaction mode, whose server
    // connections would carry a LISTEN away and deliver nothing: the poll delivers (decisions §13).
    const url =
      app.database.url === undefined || options.listenUrl === false
        ? undefined
        : (options.listenUrl ?? (app.database.pooled ? undefined : app.database.url))
    if (app.database.pooled && options.listenUrl === undefined)
      app.log.info('behind a connection pooler without EVENTS_DATABASE_URL: events are delivered by the one-second poll')
    // Delivery reads through the same database, but not through app.db's statement log: that log
    // is what a request ran (tests count it), and this background polling is no request's work.
    const reader = app.database.background

    let closing = false
    const isClosing = () => closing
    const { tracing } = app
    const background = tracing?.background ?? untracedBackground

    const listener = url
      ? createOutboxListener({
          url,
          onOutbox: () => void relay(),
          onEvents: () => void deliver(),
          onConnected: () => {
            void deliver()
            void relay()
          },
          log: app.log,
          isClosing,
        })
      : undefined
    // Delivery is created below; the feed reads its position lazily.
    const { feed, publish: publishToFeed } = createEventFeed(() => delivery.status.lastDeliveredSeq())
    const delivery = await createEventDelivery({
      reader,
      publish: async (event) => {
        publishToFeed(event)
        // With its id: the subscription's `extensions.eventId`, and what an event that cannot be
        // resolved names (src/events/event-outage.ts).
        await app.graphql.pubsub.publish({ topic: event.topic, payload: { ...event.payload, eventId: String(event.seq) } })
      },
      log: app.log,
      isClosing,
      listenerUp: () => listener?.isUp() ?? true,
      onRecovered: () => listener?.reconnectNow(),
      outsideTraces: tracing ? (run) => tracing.api.context.with(tracing.api.ROOT_CONTEXT, run) : undefined,
    })
    const { deliver } = delivery
    app.decorate('eventDelivery', delivery.status)
    app.decorate('eventFeed', feed)
    const streams = createEventStreams({
      events: app.services.events,
      feed,
      heartbeatMs: options.events.streamHeartbeatMs,
      maxPerCaller: options.events.maxStreamsPerCaller,
      stallTimeoutMs: options.events.streamStallTimeoutMs,
      log: app.log,
    })
    app.decorate('eventStreams', streams)

    const outboxRelay = createOutboxRelay({
      db: app.db,
      enabled: options.relay,
      deliver,
      wakeOthers: redisWakeUpPublisher(app, isClosing),
      log: app.log,
      isClosing,
      background,
    })
    const { relay } = outboxRelay

    const stopListening: Array<() => Promise<void>> = []
    const stopRedis = await subscribeToRedisWakeUps(app, () => void deliver())
    if (stopRedis) stopListening.push(stopRedis)
    if (listener) {
      await listener.connect()
      stopListening.push(listener.stop)
    } else if (pglite) {
      stopListening.push(await pglite.listen(EVENTS_CHANNEL, () => void deliver()))
      stopListening.push(await pglite.listen(OUTBOX_CHANNEL, () => void relay()))
    }

    // ---- The timer: relay, deliver, housekeeping --------------------------------------------
    let ticks = 0
    const prune = () =>
      background('events.housekeeping', async () => {
        try {
          const stopped = () => closing
          const events = await pruneInBatches((limit) => pruneEventLog(app.db, options.events.retentionMs, limit), stopped)
          const outcomes = await pruneInBatches((limit) => deleteExpiredOutcomes(app.db, limit), stopped)
          return { attributes: { 'events.deleted': events, 'idempotency.outcomes_deleted': outcomes } }
        } catch (error) {
          if (closing) return undefined
          app.log.warn({ err: error }, 'pruning failed; retrying on a later tick')
          return { error }
        }
      })
    const timer = setInterval(() => {
      ticks++
      void relay()
      void deliver()
      if (listener && ticks % HEARTBEAT_EVERY_TICKS === 0) void listener.heartbeat()
      if (options.relay && ticks % PRUNE_EVERY_TICKS === 0) void prune()
    }, POLL_MS)
    timer.unref()
    app.addHook('onReady', async () => {
      void relay()
    })
    app.addHook('preClose', async () => {
      closing = true
      // Open streams would hold the server open; their readers reconnect elsewhere with Last-Event-ID.
      streams.closeAll()
      clearInterval(timer)
      await outboxRelay.settled()
      await delivery.settled()
      // The database may already be gone (a test closes it first); nothing is left to stop then.
      for (const stop of stopListening)
        await Promise.resolve()
          .then(stop)
          .catch(() => {})
    })
  },
  { name: 'events', dependencies: ['db', 'graphql', 'redis'] },
)
