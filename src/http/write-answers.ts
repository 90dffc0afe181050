/**
 * How a REST write is answered: with the record, its ETag and, for a creation, Location; a POST
 * with an Idempotency-Key (decisions §7) at most once per key, a stored answer marked as replayed.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Written } from '../db/transaction.ts'
import { type IdempotencyClaim, idempotencyKeyOfHeader, validateIdempotencyKey } from '../idempotency.ts'
import { requireCaller } from '../plugins/auth.ts'
import { etagOf } from '../plugins/http-caching.ts'

/** How a REST write is answered on success: its status, and for a creation where the record lives. */
export interface WriteAnswer<T> {
  status: 200 | 201
  location?: (value: T) => string
}

/**
 * Answers a write that `write` makes: with the record, its ETag and, for a creation, Location.
 * A POST that carries an Idempotency-Key (decisions §7) hands the service its claim: the service
 * runs the write at most once per key, and a stored result is answered marked as replayed.
 */
export async function answerWrite<T extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  write: (idempotency: IdempotencyClaim<T> | undefined) => Promise<Written<T>>,
  answer: WriteAnswer<T>,
): Promise<FastifyReply> {
  const written = await write(idempotencyClaim(request, answer))
  if (written.replayed) reply.header('idempotent-replayed', 'true')
  const location = answer.location?.(written.value)
  if (location) reply.header('location', location)
  return reply.code(answer.status).header('etag', etagOf(written.value)).send(written.value)
}

function idempotencyClaim<T>(request: FastifyRequest, answer: WriteAnswer<T>): IdempotencyClaim<T> | undefined {
  const header = request.headers['idempotency-key']
  if (typeof header !== 'string') return undefined
  const key = idempotencyKeyOfHeader(header)
  validateIdempotencyKey(key, 'header')
  return {
    caller: requireCaller(request).subject,
    key,
    fingerprint: { method: request.method, path: request.url, body: request.body ?? null },
    answer: (value) => ({ status: answer.status, location: answer.location?.(value) }),
  }
}
