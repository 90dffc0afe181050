/**
 * HTTP caching and conditional requests (decisions §6). Every successful GET carries a strong
 * ETag, `Vary: Authorization` and the Cache-Control of its kind (lists may be reused for 30 s,
 * records must be revalidated); a matching If-None-Match turns it into a 304. Writes check
 * If-Match against the current representation's ETag with `requireIfMatch`; the ETag rules
 * themselves are in http/etags.ts, which the contract router's answers use too.
 */
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

export default fp(
  async function httpCaching(app) {
    // Callback-style (no promise per request).
    app.addHook('onSend', (request, reply, payload, done) => {
      const kind = request.routeOptions.config?.cache
      if (!kind || (request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return done(null, payload)
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload)
      let etag = reply.getHeader('etag') as string | undefined
      if (etag === undefined) {
        etag = etagOfBytes(payload)
        reply.header('etag', etag)
      }
      addVary(reply, 'Authorization')
      reply.header('cache-control', CACHE_CONTROL[kind])
      const ifNoneMatch = request.headers['if-none-match']
      if (ifNoneMatch !== undefined && listMatches(ifNoneMatch, etag, 'weak')) {
        reply.code(304)
        reply.removeHeader('content-type')
        reply.removeHeader('content-length')
        return done(null, '')
      }
      done(null, payload)
    })
  },
  { name: 'http-caching' },
)
