/**
 * What every REST handler needs and no domain function should know: absolute URLs, list
 * envelopes, sparse fieldsets, conditional writes and idempotent POSTs.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Caller } from '../auth/caller.ts'
import type { Written } from '../db/transaction.ts'
import { idempotencyKeyOfHeader, validateIdempotencyKey, type IdempotencyClaim } from '../idempotency.ts'
import { requireCaller } from '../plugins/auth.ts'
import { etagOf, requireIfMatch } from '../plugins/http-caching.ts'
import type { Page } from '../pagination/page.ts'

export function caller(request: FastifyRequest): Caller {
  return requireCaller(request)
}

/** PUBLIC_URL when configured, else the scheme and host the client used. */
export function baseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`
}

/** The same request with a new cursor: every other query parameter is kept as it was sent. */
export function nextPageUrl(request: FastifyRequest, publicUrl: string | undefined, cursor: string | null): string | null {
  if (cursor === null) return null
  const url = new URL(request.url, baseUrl(request, publicUrl))
  url.searchParams.set('cursor', cursor)
  return new URL(url.pathname + url.search, baseUrl(request, publicUrl)).toString()
}

export function parseFields(fields: string | undefined): string[] | undefined {
  return fields === undefined ? undefined : [...new Set(fields.split(','))]
}

/** A record reduced to the requested fields (the contract's pattern already admits only real names). */
export function pick<T extends object>(record: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields) return record
  const result: Record<string, unknown> = {}
  for (const key of Object.keys(record)) if (fields.includes(key)) result[key] = (record as Record<string, unknown>)[key]
  return result as Partial<T>
}

/**
 * Sends records reduced by `fields`. The contract's response schemas require every field, so a
 * sparse answer bypasses the compiled serializer; its values come from the same API objects.
 */
export function sendSparse(reply: FastifyReply, body: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').serializer(JSON.stringify).send(body)
}

/** One record: with its ETag when complete, reduced and re-tagged by the payload when sparse. */
export function sendRecord<T extends object>(reply: FastifyReply, record: T, fields?: string): FastifyReply {
  const names = parseFields(fields)
  if (names) return sendSparse(reply, pick(record, names))
  return reply.header('etag', etagOf(record)).send(record)
}

/**
 * A top-level collection: envelope A, `{data, page: {next, cursor, total}}` (decisions §5);
 * `cursor` is the raw cursor of `next` (issue #14), so SDKs need not parse the URL.
 */
export function sendCollection<T extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  publicUrl: string | undefined,
  page: Page<T>,
  fields: string | undefined,
): FastifyReply {
  const names = parseFields(fields)
  const body = {
    data: page.data.map((record) => pick(record, names)),
    page: { next: nextPageUrl(request, publicUrl, page.nextCursor), cursor: page.nextCursor, total: page.total },
  }
  return names ? sendSparse(reply, body) : reply.send(body)
}

/** A nested collection: envelope B, `{data, next_cursor}` (decisions §5). */
export function sendNestedCollection<T extends object>(reply: FastifyReply, page: Page<T>, fields: string | undefined): FastifyReply {
  const names = parseFields(fields)
  const body = { data: page.data.map((record) => pick(record, names)), next_cursor: page.nextCursor }
  return names ? sendSparse(reply, body) : reply.send(body)
}

export function ifMatch(request: FastifyRequest): (current: object) => void {
  return (current) => requireIfMatch(request, etagOf(current))
}

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
    caller: caller(request).subject,
    key,
    fingerprint: { method: request.method, path: request.url, body: request.body ?? null },
    answer: (value) => ({ status: answer.status, location: answer.location?.(value) }),
  }
}
