/**
 * HTTP caching and conditional requests (decisions §6). Every successful GET carries a strong
 * ETag, `Vary: Authorization` and the Cache-Control of its kind (lists may be reused for 30 s,
 * records must be revalidated); a matching If-None-Match turns it into a 304. Writes check
 * If-Match against the current representation's ETag with `requireIfMatch`.
 */
import { hash as digest } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { preconditionFailed } from '../errors.ts'
import * as contractSchemas from '../generated/openapi/schemas.ts'

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

function hash(data: string | Buffer): string {
  // The one-shot digest: no Hash object per response; the same value as before.
  return `"${digest('sha256', data, 'base64url').slice(0, 32)}"`
}

/**
 * The contract's representations, as one short tag: a deploy that changes what a record looks like
 * changes every version ETag, so no client keeps a body of the old shape through a 304.
 */
const REPRESENTATIONS = digest('sha256', JSON.stringify(contractSchemas), 'base64url').slice(0, 8)

/**
 * The ETag of a record's full representation; the same value its GET carries. A record that
 * carries its version (`updated_at`, which every change advances by at least a millisecond:
 * db/updated-at.ts) is tagged by its id and that version, with nothing serialized or hashed;
 * any other (users, products, comments: never changed once created) by a hash of its
 * JSON.
 */
export function etagOf(representation: object): string {
  if ('id' in representation && 'updated_at' in representation) {
    const { id, updated_at } = representation
    if (typeof id === 'number' && typeof updated_at === 'string') return etagOfVersion(id, updated_at)
  }
  return hash(JSON.stringify(representation))
}

/** The ETag of the full representation of the record `id` at version `updatedAt` (see etagOf). */
export function etagOfVersion(id: number, updatedAt: string): string {
  return `"${REPRESENTATIONS}.${id}.${updatedAt}"`
}

/** An entity tag without its weakness indicator: `W/"x"` and `"x"` have the same opaque tag. */
const opaqueTag = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag)

/**
 * Whether an If-Match or If-None-Match list names the current entity tag (RFC 9110 §8.8.3.2). If-Match
 * compares strongly (§13.1.1: a weak `W/"…"` never matches, a write must not apply to a version merely
 * equivalent); If-None-Match compares weakly (§13.1.2: `W/"x"` matches `"x"`, as a cache revalidates).
 */
function listMatches(header: string, etag: string, comparison: 'strong' | 'weak'): boolean {
  if (header.trim() === '*') return true
  const current = comparison === 'strong' ? etag : opaqueTag(etag)
  return header.split(',').some((candidate) => {
    const tag = candidate.trim()
    return (comparison === 'strong' ? tag : opaqueTag(tag)) === current
  })
}

/** Refuses a write whose If-Match names another version than the current one. */
export function requireIfMatch(request: FastifyRequest, currentEtag: string): void {
  const header = request.headers['if-match']
  if (header === undefined) return
  if (!listMatches(header, currentEtag, 'strong')) {
    throw preconditionFailed(`The resource has changed: its current ETag is ${currentEtag}.`)
  }
}

/** Adds a field to Vary, keeping what is there (CORS already varies on Origin). */
export function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  // The usual case (CORS off): nothing to merge with.
  if (current === undefined) {
    reply.header('vary', field)
    return
  }
  const fields = String(current ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
  if (fields.some((part) => part === '*' || part.toLowerCase() === field.toLowerCase())) return
  reply.header('vary', [...fields, field].join(', '))
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
        etag = hash(payload)
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
