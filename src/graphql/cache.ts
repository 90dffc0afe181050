/**
 * mercurius-cache for the public, read-only data (articles, comments through them, products):
 * root lookups are cached for a few seconds, keyed by arguments AND caller, so one caller's entry
 * is never served to another, and tagged with references that writes invalidate. In Redis when
 * REDIS_URL is set, so an invalidation reaches every instance.
 *
 * While Redis is disconnected the cache is bypassed (resolvers run, nothing is stored), and a
 * Redis command that fails anyway counts as a miss: a query never fails because of its cache.
 * Writes made meanwhile cannot invalidate Redis, so an entry stored before the outage may be
 * served until its TTL ends.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { MercuriusContext } from 'mercurius'
import mercuriusCacheModule, { type MercuriusCacheOptions } from 'mercurius-cache'
import { cacheReferences } from '../cache-references.ts'

export const PUBLIC_CACHE_TTL_SECONDS = 10

// mercurius-cache is CommonJS and its typings declare an ES default export, so under NodeNext the
// default import is typed as the module object although at run time it is the plugin itself.
const mercuriusCache = ((mercuriusCacheModule as unknown as { default?: FastifyPluginAsync<MercuriusCacheOptions> }).default ??
  mercuriusCacheModule) as FastifyPluginAsync<MercuriusCacheOptions>

const perCaller = (_source: unknown, _args: unknown, context: MercuriusContext) => `caller:${context.caller.subject}`

export async function registerPublicDataCache(app: FastifyInstance): Promise<void> {
  const { redis } = app
  // The Redis storage catches its own command errors and reports each at error level: they are
  // one condition, reported (throttled) as the cache going on without Redis.
  const storageLog = {
    debug: app.log.debug.bind(app.log),
    warn: app.log.warn.bind(app.log),
    error: (entry: { err?: unknown }) => app.redisFailedOpen('GraphQL cache', entry.err),
  }
  await app.register(mercuriusCache, {
    ttl: PUBLIC_CACHE_TTL_SECONDS,
    storage: redis
      ? {
          type: 'redis',
          // The typings ask for `invalidate`; the storage turns invalidation on for any object given here.
          options: { client: redis, log: storageLog, invalidation: { invalidate: true, referencesTTL: PUBLIC_CACHE_TTL_SECONDS * 2 } },
        }
      : { type: 'memory', options: { size: 2048, invalidation: true } },
    // Disconnected, every command would fail at once: skip the cache without trying.
    ...(redis
      ? {
          skip: () => {
            if (redis.status === 'ready') return false
            app.redisFailedOpen('GraphQL cache', new Error(`Redis is not connected (${redis.status})`))
            return true
          },
        }
      : {}),
    policy: {
      Query: {
        article: {
          extendKey: perCaller,
          references: (_request: unknown, _key: string, result: { id?: number } | null) =>
            result?.id ? [cacheReferences.article(result.id)] : null,
        },
        articles: { extendKey: perCaller, references: () => [cacheReferences.articles] },
        product: { extendKey: perCaller, references: () => [cacheReferences.products] },
        products: { extendKey: perCaller, references: () => [cacheReferences.products] },
      },
    },
  })
}

/** Called by the services after they change public data, whichever style made the change. */
export function createCacheInvalidator(app: FastifyInstance): (references: string[]) => Promise<void> {
  return async (references) => {
    // Undefined until the GraphQL plugin has registered the cache.
    const graphqlCache = app.graphql?.cache
    if (!graphqlCache) return
    try {
      await graphqlCache.invalidate(references)
    } catch (error) {
      // A failed invalidation leaves entries to expire within their short TTL; the write stands.
      app.log.warn({ err: error, references }, 'cache invalidation failed')
    }
  }
}
