/**
 * Events from the transactional outbox to live subscribers, on one instance or many (decisions
 * §11). Writes NOTIFY the outbox channel on commit; the relay wakes, moves unpublished rows to the
 * events channel (see relayOutboxBatch) and every instance's listener hands them to its GraphQL
 * pubsub. PostgreSQL's LISTEN/NOTIFY does the fan-out — PGlite implements it in-process — and a
 * relay also runs at start and every second, so events committed by an instance that died before
 * relaying are published by the next one.
 */
import fp from 'fastify-plugin'
import { deleteExpiredOutcomes } from '../db/repositories/idempotency-keys.ts'
import pg from 'pg'
import {
  deletePublishedEvents,
  EVENTS_CHANNEL,
  findEventPayload,
  notifyFanOut,
  OUTBOX_CHANNEL,
  relayOutboxBatch,
  type EventFanOut,
  type RelayedEvent,
} from '../db/repositories/outbox.ts'

export const REDIS_EVENTS_CHANNEL = 'api:events'

const POLL_MS = 1000
const PRUNE_EVERY_TICKS = 60

export default fp<{ relay: boolean }>(
  async function events(app, options) {
    let lastDelivered = 0
    // Notifications arrive in commit order; fetching each payload is asynchronous, so deliveries
    // are chained to keep that order.
    let deliveries: Promise<void> = Promise.resolve()
    const deliver = (message: string) => {
      const event = JSON.parse(message) as RelayedEvent
      deliveries = deliveries.then(async () => {
        // Ids only grow; a redelivered event is dropped.
        if (event.id <= lastDelivered) return
        lastDelivered = event.id
        try {
          const payload = await findEventPayload(app.db, event.id)
          if (payload) await app.graphql.pubsub.publish({ topic: event.topic, payload })
        } catch (error) {
          if (!closing) app.log.warn({ err: error, event }, 'event delivery failed')
        }
      })
    }

    let running: Promise<void> | undefined
    let again = false
    let closing = false
    const relay = (): Promise<void> => {
      if (!options.relay || closing) return Promise.resolve()
      if (running) {
        again = true
        return running
      }
      running = (async () => {
        do {
          again = false
          try {
            while ((await app.db.transaction().execute((trx) => relayOutboxBatch(trx, fanOut))) > 0) {
              // A full batch: more may be waiting.
            }
          } catch (error) {
            if (!closing) app.log.warn({ err: error }, 'outbox relay failed; retrying on the next tick')
          }
        } while (again && !closing)
      })().finally(() => {
        running = undefined
      })
      return running
    }

    const stopListening: Array<() => Promise<void>> = []
    const { url, pglite } = app.database
    // With Redis, events fan out through a Redis channel; PostgreSQL still wakes the relays.
    let fanOut: EventFanOut = notifyFanOut
    if (app.redis) {
      const publisher = app.redis
      fanOut = async (_trx, event) => {
        await publisher.publish(REDIS_EVENTS_CHANNEL, JSON.stringify(event))
      }
      const subscriber = app.redis.duplicate()
      subscriber.on('error', (error) => app.log.warn({ err: error }, 'event subscriber connection error'))
      subscriber.on('message', (_channel, message) => deliver(message))
      await subscriber.subscribe(REDIS_EVENTS_CHANNEL)
      stopListening.push(async () => {
        subscriber.disconnect()
      })
    }
    if (url) {
      // A connection of its own, outside the pool: it stays LISTENing for the instance's lifetime
      // and must not hold up the pool's shutdown.
      const client = new pg.Client({ connectionString: url })
      client.on('error', (error) => app.log.warn({ err: error }, 'event listener connection error'))
      await client.connect()
      client.on('notification', (notification) => {
        if (notification.channel === EVENTS_CHANNEL && notification.payload && !app.redis) deliver(notification.payload)
        else if (notification.channel === OUTBOX_CHANNEL) void relay()
      })
      await client.query(`LISTEN ${EVENTS_CHANNEL}`)
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`)
      stopListening.push(() => client.end())
    } else if (pglite) {
      if (!app.redis) stopListening.push(await pglite.listen(EVENTS_CHANNEL, (payload) => deliver(payload)))
      stopListening.push(await pglite.listen(OUTBOX_CHANNEL, () => void relay()))
    }

    // Housekeeping rides on the relay's timer: published events and expired idempotency keys.
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
      void relay()
      if (options.relay && ++ticks % PRUNE_EVERY_TICKS === 0) void prune()
    }, POLL_MS)
    timer.unref()
    app.addHook('onReady', async () => {
      void relay()
    })
    app.addHook('preClose', async () => {
      closing = true
      clearInterval(timer)
      await running
      await deliveries
      // The database may already be gone (a test closes it first); nothing is left to stop then.
      for (const stop of stopListening) await Promise.resolve().then(stop).catch(() => {})
    })
  },
  { name: 'events', dependencies: ['db', 'graphql', 'redis'] },
)
