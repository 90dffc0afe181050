/**
 * A REST write at the edge, in two calls the route makes around its service, one after the other:
 * `idempotencyClaim` reads the request's Idempotency-Key (decisions §7) into the claim the service
 * runs the write with, and `answerWritten` answers the service's result: the record, its ETag, the
 * status of its kind and, for a creation, Location; a stored answer marked as replayed. The status
 * and Location are built here, from the result, once per answer: the write pipeline stores the
 * record, not REST's answer, and a replay is answered exactly like the first request. Nothing here
 * calls the service: the path goes down from the route and never back up.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { checkIdempotencyKey, type IdempotencyClaim, SUCCESS_STATUS, type Written } from '../db/write.ts'
import { requireCaller } from '../auth/caller.ts'
import { etagOf } from './etags.ts'

/** Where a created record lives (Location), for a creation whose record has a URL. */
export interface WriteAnswer<T> {
  location?: (value: T) => string
}

/**
 * Answers what a write returned: the record, its ETag, the status its kind answers with (201 a
 * creation, 200 a change: src/db/write.ts) and, for a creation, Location; a stored result (the same
 * Idempotency-Key again) marked as replayed.
 */
export function answerWritten<T extends object>(reply: FastifyReply, written: Written<T>, answer: WriteAnswer<T> = {}): FastifyReply {
  if (written.replayed) reply.header('idempotent-replayed', 'true')
  const location = answer.location?.(written.value)
  if (location) reply.header('location', location)
  const status = SUCCESS_STATUS[written.created ? 'creation' : 'change']
  return reply.code(status).header('etag', etagOf(written.value)).send(written.value)
}

/**
 * The claim a POST's Idempotency-Key makes (decisions §7), for the service to run its write with at
 * most once per key; undefined without the header. A malformed key is refused here, before the
 * service is called.
 */
export function idempotencyClaim(request: FastifyRequest): IdempotencyClaim | undefined {
  const header = request.headers['idempotency-key']
  if (typeof header !== 'string') return undefined
  const key = idempotencyKeyOfHeader(header)
  checkIdempotencyKey(key, { in: 'header', name: 'Idempotency-Key' })
  return {
    caller: requireCaller(request).subject,
    key,
    fingerprint: { method: request.method, path: request.url, body: request.body ?? null },
  }
}

/**
 * The key an Idempotency-Key header names. The IETF draft defines the field as an RFC 8941
 * structured-field string (`"abc"`); clients also send the bare token (`abc`). Both name the
 * same key: a well-formed sf-string is unquoted (and its `\"` and `\\` unescaped).
 */
function idempotencyKeyOfHeader(value: string): string {
  const quoted = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/.exec(value)
  return quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : value
}
