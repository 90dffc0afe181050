/**
 * Request budgets per caller (decisions §9): keyed by the token's `sub`, by IP without a valid
 * token. Counters live in memory, or in Redis when one is configured, so that several instances
 * share one budget. Every response reports the budget in the current IETF draft's RateLimit-Policy
 * and RateLimit fields; the legacy RateLimit-Limit/-Remaining/-Reset only with
 * RATE_LIMIT_LEGACY_HEADERS=true (decisions §13, "Lean responses").
 *
 * When the counter store fails (Redis down or hanging), the request goes on unlimited and without
 * RateLimit fields, since the service cannot know the budget: failing open (decisions §12). Every
 * request is counted, unknown routes (404) included; only a route with `config: { rateLimit: false }`
 * (the health probes) is never counted nor refused.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { ApiError } from '../errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Counts the request against its caller's budget and reports it on the reply; throws the 429
     * when the budget is spent. The app-wide hook calls it, and so do answers Fastify sends
     * outside any route (http/unrouted-answers.ts).
     */
    countRequest(request: FastifyRequest, reply: FastifyReply): Promise<void>
  }
}

export interface RateLimitOptions {
  max: number
  windowMs: number
  /** Also send RateLimit-Limit/-Remaining/-Reset (RATE_LIMIT_LEGACY_HEADERS). */
  legacyHeaders: boolean
  redis: Redis | undefined
}

export default fp<RateLimitOptions>(
  async function rateLimitPlugin(app, options) {
    const windowSeconds = Math.ceil(options.windowMs / 1000)
    // The plugin keeps the counters; this file decides what a budget, or a failed store, means.
    await app.register(rateLimit, {
      global: false,
      max: options.max,
      timeWindow: options.windowMs,
      ...(options.redis ? { redis: options.redis, nameSpace: 'api-rate-limit:' } : {}),
      // The caller is established by the auth plugin's onRequest hook, which runs first.
      keyGenerator: (request) => (request.caller ? `sub:${request.caller.subject}` : `ip:${request.ip}`),
    })
    const budgetOf = app.createRateLimit()
    // The policy names the configured budget; only the state changes per response.
    const policyField = `"default";q=${options.max};w=${windowSeconds}`

    async function countRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      let budget: Awaited<ReturnType<typeof budgetOf>>
      try {
        budget = await budgetOf(request)
      } catch (error) {
        app.redisFailedOpen('rate limit', error)
        return
      }
      if (budget.isAllowed) return
      const reset = budget.ttlInSeconds
      if (options.legacyHeaders) {
        reply.header('ratelimit-limit', budget.max)
        reply.header('ratelimit-remaining', budget.remaining)
        reply.header('ratelimit-reset', reset)
      }
      reply.header('ratelimit-policy', policyField)
      reply.header('ratelimit', `"default";r=${budget.remaining};t=${reset}`)
      if (budget.isExceeded) {
        throw new ApiError('RATE_LIMITED', `Rate limit of ${budget.max} requests per ${windowSeconds} s exceeded; retry in ${reset} s.`, {
          headers: { 'retry-after': String(reset) },
        })
      }
    }

    app.decorate('countRequest', countRequest)
    // App-wide, so that the not-found handler counts too (an unknown route is no free request), after
    // the hooks registered before this plugin: auth, which names the caller, and the request's cost.
    // Callback-style: one promise per request, the count's own, not a second for the hook.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config.rateLimit === false) return done()
      countRequest(request, reply).then(() => done(), done)
    })
  },
  { name: 'rate-limit', dependencies: ['auth', 'redis'] },
)
