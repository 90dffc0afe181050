/**
 * Redis: a second wake-up path between instances, never the only one. ioredis reconnects and
 * re-subscribes by itself; a failed publish is logged and the NOTIFY and the timer still wake
 * every instance, so instances with and without REDIS_URL on one database deliver the same events.
 */
import type { FastifyInstance } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'

export const REDIS_EVENTS_CHANNEL = 'api:events'

const REDIS_SUBSCRIBE_WAIT_MS = 2000

/** Tells the other instances that events were relayed; a no-op without Redis or while it is away. */
export function redisWakeUpPublisher(app: FastifyInstance, isClosing: () => boolean): (lastSeq: number | undefined) => void {
  const redis = app.redis
  return (lastSeq) => {
    // Not awaited, and skipped while Redis is away: the NOTIFY already woke every instance.
    if (redis?.status !== 'ready') return
    redis.publish(REDIS_EVENTS_CHANNEL, String(lastSeq)).catch((error: unknown) => {
      if (!isClosing()) app.redisFailedOpen('event wake-ups', error)
    })
  }
}

/** Calls `wake` on every wake-up another instance publishes; returns how to stop, or undefined without Redis. */
export async function subscribeToRedisWakeUps(app: FastifyInstance, wake: () => void): Promise<(() => Promise<void>) | undefined> {
  if (!app.redis) return undefined
  const subscriber = app.redis.duplicate()
  // Emitted for every failed reconnection attempt while Redis is away: throttled like the other features' warnings.
  subscriber.on('error', (error) => app.redisFailedOpen('event wake-ups', error))
  subscriber.on('message', wake)
  // After a reconnect (ioredis re-subscribes by itself) wake-ups may have been missed.
  subscriber.on('ready', wake)
  const subscribed = subscriber.subscribe(REDIS_EVENTS_CHANNEL).catch((error: unknown) => {
    app.log.warn({ err: error }, 'subscribing to Redis event wake-ups failed; NOTIFY and polling still deliver')
  })
  // Starting does not wait on Redis for long: events do not depend on it.
  await Promise.race([subscribed, sleep(REDIS_SUBSCRIBE_WAIT_MS, undefined, { ref: false })])
  return async () => {
    subscriber.disconnect()
  }
}
