/**
 * HTTP caching and conditional requests (decisions §6). Every successful GET carries a strong
 * ETag, `Vary: Authorization` and the Cache-Control of its kind (lists may be reused for 30 s,
 * records must be revalidated); a matching If-None-Match turns it into a 304. Writes check
 * If-Match against the current representation's ETag with `requireIfMatch`; the ETag rules
 * themselves are in http/etags.ts, which the contract router's answers use too.
 */
import type { onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { etagOfBytes, listMatches } from '../http/etags.ts'
import { addVary } from '../http/vary.ts'

export type CacheKind = 'list' | 'record'

declare module 'fastify' {
  interface FastifyContextConfig {
    cache?: CacheKind
  }
}

const CACHE_CONTROL: Record<CacheKind, string> = {
  list: 'private, max-age=30',
  record: 'private, no-cache',
}

/**
 * The onSend hook of the routes of one cache kind: its Cache-Control is fixed when the route is
 * registered (decisions §19), and only the routes with a kind get it.
 */
function cachingHook(kind: CacheKind): onSendHookHandler {
  const cacheControl = CACHE_CONTROL[kind]
  // Callback-style (no promise per request).
  return (request, reply, payload, done) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return done(null, payload)
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload)
    let etag = reply.getHeader('etag') as string | undefined
    if (etag === undefined) {
      etag = etagOfBytes(payload)
      reply.header('etag', etag)
    }
    addVary(reply, 'Authorization')
    reply.header('cache-control', cacheControl)
    const ifNoneMatch = request.headers['if-none-match']
    if (ifNoneMatch !== undefined && listMatches(ifNoneMatch, etag, 'weak')) {
      reply.code(304)
      reply.removeHeader('content-type')
      reply.removeHeader('content-length')
      return done(null, '')
    }
    done(null, payload)
  }
}

export default fp(
  async function httpCaching(app) {
    const hooks = { list: cachingHook('list'), record: cachingHook('record') }
    // A route-level hook, on the routes with a cache kind only (a GET and its HEAD): the other
    // routes, writes and GraphQL among them, run no caching hook at all. It runs after the app's
    // onSend hooks, as the app-wide hook it replaces did (registered after them), and first of the
    // route's own: before the one with which Fastify empties a HEAD answer's body.
    app.addHook('onRoute', (route) => {
      const kind = route.config?.cache
      if (kind) route.onSend = [hooks[kind], ...[route.onSend ?? []].flat()]
    })
  },
  { name: 'http-caching' },
)
