/**
 * The optional shared Redis (REDIS_URL): rate-limit counters, the GraphQL points bucket, the
 * GraphQL cache and subscription fan-out use it so that several instances behave as one service.
 *
 * When the connection dies, Redis is an optimisation, not a dependency (decisions §12): every
 * command fails within COMMAND_TIMEOUT_MS (at once while disconnected: no offline queue, no
 * retries), each feature goes on without Redis and reports it through `redisFailedOpen`, and the
 * client reconnects by itself with a capped backoff. The service also starts while Redis is down.
 */
import fp from 'fastify-plugin'
import type { Redis, RedisOptions } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis | undefined
    /**
     * A feature that just went on without Redis says so here: one warning per feature at most
     * every REDIS_WARN_INTERVAL_MS, counting the failures it stands for, so a dead Redis cannot
     * flood the logs.
     */
    redisFailedOpen(feature: string, error: unknown): void
  }
}

/** What a request may lose to a Redis that hangs: a budget check must never take seconds. */
export const REDIS_COMMAND_TIMEOUT_MS = 250
export const REDIS_WARN_INTERVAL_MS = 30_000
const CONNECT_TIMEOUT_MS = 2000
const MAX_RECONNECT_DELAY_MS = 2000

const commandOptions: RedisOptions = {
  lazyConnect: true,
  connectTimeout: CONNECT_TIMEOUT_MS,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  // While disconnected a command is refused at once instead of queueing behind the reconnection;
  // a command in flight when the connection drops is failed, not resent.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  // 100 ms, 200 ms, 400 ms … then every 2 s for as long as Redis stays away.
  retryStrategy: (attempt) => Math.min(100 * 2 ** (attempt - 1), MAX_RECONNECT_DELAY_MS),
}

/**
 * A subscriber connection waits for Redis instead: its SUBSCRIBE may be issued before it has
 * connected (so it needs the offline queue), it must never time out (a rejected re-subscribe after
 * a reconnect would be an unhandled rejection), and ioredis re-subscribes its channels after every
 * reconnect. It keeps the capped reconnect backoff.
 */
const subscriberOverrides: Partial<RedisOptions> = {
  enableOfflineQueue: true,
  maxRetriesPerRequest: null,
  commandTimeout: undefined,
}

/**
 * The service's client; `duplicate()` (the events plugin subscribes through one) gives a subscriber.
 * ioredis is loaded only when REDIS_URL is set: an instance without Redis (and every test process
 * that runs without it) does not pay its import, about 0.15 s of CPU (decisions §14).
 */
async function serviceRedis(url: string): Promise<Redis> {
  const { Redis } = await import('ioredis')
  class ServiceRedis extends Redis {
    override duplicate(override?: Partial<RedisOptions>): Redis {
      return super.duplicate({ ...subscriberOverrides, ...override })
    }
  }
  return new ServiceRedis(url, commandOptions)
}

/** `ok` when Redis answers a PING within the command timeout, `degraded` otherwise. */
export async function redisStatus(redis: Redis): Promise<'ok' | 'degraded'> {
  return redis.ping().then(
    () => 'ok' as const,
    () => 'degraded' as const,
  )
}

function isCommandTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Command timed out'
}

export default fp<{ url: string | undefined }>(
  async function redis(app, options) {
    const client = options.url ? await serviceRedis(options.url) : undefined
    const warnedAt = new Map<string, { at: number; suppressed: number }>()
    app.decorate('redisFailedOpen', (feature: string, error: unknown) => {
      // A command that timed out on a connection that looks healthy means Redis stopped answering
      // (hung, or the network dropped silently). Reconnecting makes every later command fail at
      // once instead of each waiting out its timeout, until a reconnection's ready check is
      // answered again.
      if (client?.status === 'ready' && isCommandTimeout(error)) client.disconnect(true)
      const now = Date.now()
      const last = warnedAt.get(feature)
      if (last && now - last.at < REDIS_WARN_INTERVAL_MS) {
        last.suppressed++
        return
      }
      warnedAt.set(feature, { at: now, suppressed: 0 })
      app.log.warn(
        { err: error, feature, failuresSinceLastWarning: last?.suppressed ?? 0 },
        `Redis unavailable: ${feature} goes on without it`,
      )
    })

    if (!client) {
      app.decorate('redis', undefined)
      return
    }
    let lost = false
    // Emitted for every failed (re)connection attempt: throttled like the features' warnings.
    client.on('error', (error) => app.redisFailedOpen('connection', error))
    client.on('close', () => {
      lost = true
    })
    client.on('ready', () => {
      if (!lost) return
      lost = false
      // The next outage warns at once again.
      warnedAt.clear()
      app.log.info('Redis connection restored')
    })
    try {
      await client.connect()
    } catch (error) {
      // Not fatal: the client keeps reconnecting and every feature works without Redis meanwhile.
      app.log.warn(
        { err: error },
        'Redis is unreachable at start: starting degraded (rate limits and GraphQL points unenforced, cache bypassed) and reconnecting in the background',
      )
    }
    app.decorate('redis', client)
    app.addHook('onClose', async () => {
      await client.quit().catch(() => client.disconnect())
    })
  },
  { name: 'redis' },
)
