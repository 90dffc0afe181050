/**
 * Request budgets per caller (decisions §9): keyed by the token's `sub`, by IP without a valid
 * token. Counters live in memory, or in Redis when one is configured, so that several instances
 * share one budget. Every response reports the budget both in the headers clients read today
 * (RateLimit-Limit/Remaining/Reset) and in the current IETF draft's RateLimit-Policy/RateLimit.
 */
import rateLimit from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { ApiError } from '../errors.ts'

export interface RateLimitOptions {
  max: number
  windowMs: number
  redis: Redis | undefined
}

export default fp<RateLimitOptions>(
  async function rateLimitPlugin(app, options) {
    const windowSeconds = Math.ceil(options.windowMs / 1000)
    await app.register(rateLimit, {
      global: true,
      max: options.max,
      timeWindow: options.windowMs,
      enableDraftSpec: true,
      ...(options.redis ? { redis: options.redis, nameSpace: 'api-rate-limit:' } : {}),
      // The caller is established by the auth plugin's onRequest hook, which runs first.
      keyGenerator: (request) => (request.caller ? `sub:${request.caller.subject}` : `ip:${request.ip}`),
      errorResponseBuilder: (_request, context) =>
        new ApiError(429, 'RATE_LIMITED', `Rate limit of ${context.max} requests per ${windowSeconds} s exceeded; retry in ${context.after}.`),
    })

    app.addHook('onSend', async (_request, reply, payload) => {
      const remaining = reply.getHeader('ratelimit-remaining')
      const reset = reply.getHeader('ratelimit-reset')
      if (remaining !== undefined && reset !== undefined) {
        reply.header('ratelimit-policy', `"default";q=${options.max};w=${windowSeconds}`)
        reply.header('ratelimit', `"default";r=${remaining};t=${reset}`)
      }
      return payload
    })
  },
  { name: 'rate-limit', dependencies: ['auth'] },
)
