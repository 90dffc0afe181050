/**
 * Liveness and readiness, outside the versioned API and without a credential: a load balancer
 * asks /readyz whether this instance can serve (its database answers and it can deliver events to
 * its subscribers), /healthz whether the process is alive at all. Probes are never rate limited
 * (a load balancer probes from one IP). Redis is optional: while it is away the instance still
 * serves (degraded), so it stays ready.
 */
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { ApiError, DATABASE_RETRY_AFTER_SECONDS } from '../../errors.ts'
import { sendProblem } from '../../http/problems.ts'
import { redisStatus } from '../../plugins/redis.ts'

const READY_TIMEOUT_MS = 2000

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { logLevel: 'warn', config: { rateLimit: false } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { logLevel: 'warn', config: { rateLimit: false } }, async (request, reply) => {
    // First sign of a shutdown (plugins/shutdown.ts): the balancer takes this instance out while
    // it still serves what is sent to it.
    if (app.draining)
      return sendProblem(reply, new ApiError('SERVICE_UNAVAILABLE', 'This instance is shutting down.', { headers: { 'retry-after': '1' } }))
    const deadline = Date.now() + READY_TIMEOUT_MS
    const withinDeadline = <T>(work: Promise<T>, what: string): Promise<T> => {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out`)), Math.max(0, deadline - Date.now()))
      })
      return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
    }
    try {
      await withinDeadline(sql`select 1`.execute(app.db), 'database check')
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed')
      return sendProblem(
        reply,
        new ApiError('SERVICE_UNAVAILABLE', 'The database is unreachable.', {
          headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
        }),
      )
    }
    // Subscribers on an instance that cannot deliver would silently miss events (decisions §12).
    // A failed catch-up is tried again here: the database just answered, so may the outbox
    // (docs/operations.md: readiness follows the service out of an outage).
    const eventsProblem = await withinDeadline(app.eventDelivery.recheck(), 'event delivery check').catch(() =>
      app.eventDelivery.unavailable(),
    )
    if (eventsProblem) {
      request.log.warn({ reason: eventsProblem }, 'readiness check failed: events')
      return sendProblem(
        reply,
        new ApiError('EVENTS_UNAVAILABLE', 'This instance cannot deliver events to subscribers.', { headers: { 'retry-after': '5' } }),
      )
    }
    const redis = app.redis ? { redis: await redisStatus(app.redis) } : {}
    // A replica down or lagging leaves this instance ready: its reads go to the primary (decisions §15).
    const replicas = app.replicas ? { replicas: app.replicas.status() } : {}
    return { status: 'ready', database: app.database.kind, ...redis, ...replicas }
  })
}
