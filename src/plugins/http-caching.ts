/**
 * HTTP caching and conditional requests (decisions §6). Every successful GET carries a strong
 * ETag, `Vary: Authorization` and the Cache-Control of its kind (lists may be reused for 30 s,
 * records must be revalidated); a matching If-None-Match turns it into a 304. Writes check
 * If-Match against the current representation's ETag with `requireIfMatch`.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { preconditionFailed } from '../errors.ts'

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
  return `"${createHash('sha256').update(data).digest('base64url').slice(0, 32)}"`
}

/** The ETag of a record's full representation; the same value its GET carries. */
export function etagOf(representation: unknown): string {
  return hash(JSON.stringify(representation))
}

/** If-Match uses the strong comparison (RFC 9110 §13.1.1): a weak tag `W/"…"` never matches. */
function listMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  return header.split(',').some((candidate) => candidate.trim() === etag)
}

/** Refuses a write whose If-Match names another version than the current one. */
export function requireIfMatch(request: FastifyRequest, currentEtag: string): void {
  const header = request.headers['if-match']
  if (header === undefined) return
  if (!listMatches(header, currentEtag)) {
    throw preconditionFailed(`The resource has changed: its current ETag is ${currentEtag}.`)
  }
}

/** Adds a field to Vary, keeping what is there (CORS already varies on Origin). */
function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  const fields = String(current ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
  if (fields.some((part) => part === '*' || part.toLowerCase() === field.toLowerCase())) return
  reply.header('vary', [...fields, field].join(', '))
}

export default fp(
  async function httpCaching(app) {
    app.addHook('onSend', async (request, reply, payload) => {
      const kind = request.routeOptions.config?.cache
      if (!kind || (request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
      let etag = reply.getHeader('etag') as string | undefined
      if (etag === undefined) {
        etag = hash(payload)
        reply.header('etag', etag)
      }
      addVary(reply, 'Authorization')
      reply.header('cache-control', CACHE_CONTROL[kind])
      const ifNoneMatch = request.headers['if-none-match']
      if (ifNoneMatch !== undefined && listMatches(ifNoneMatch, etag)) {
        reply.code(304)
        reply.removeHeader('content-type')
        reply.removeHeader('content-length')
        return ''
      }
      return payload
    })
  },
  { name: 'http-caching' },
)
