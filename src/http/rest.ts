/**
 * What every REST handler needs and no domain function should know: absolute URLs, list
 * envelopes, sparse fieldsets, conditional writes and idempotent POSTs.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Transaction } from 'kysely'
import type { Caller } from '../auth/caller.ts'
import type { Database } from '../db/schema.ts'
import type { Executor } from '../db/transaction.ts'
import { idempotencyKeyOfHeader, runIdempotent, validateIdempotencyKey, type Outcome } from '../idempotency.ts'
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

/**
 * Runs a POST once per Idempotency-Key (when the client sent one) and answers with the stored or
 * fresh outcome. `work` receives the executor its writes must use.
 */
export async function idempotentPost(
  request: FastifyRequest,
  reply: FastifyReply,
  db: import('kysely').Kysely<Database>,
  work: (executor: Executor) => Promise<Outcome>,
): Promise<FastifyReply> {
  const header = request.headers['idempotency-key']
  const key = typeof header === 'string' ? idempotencyKeyOfHeader(header) : undefined
  let outcome: Outcome
  if (key !== undefined) {
    validateIdempotencyKey(key, 'header')
    const result = await runIdempotent(
      db,
      { caller: caller(request).subject, key, fingerprint: { method: request.method, path: request.url, body: request.body ?? null } },
      (trx: Transaction<Database>) => work(trx),
    )
    if (result.replayed) reply.header('idempotent-replayed', 'true')
    outcome = result.outcome
  } else {
    outcome = await work(db)
  }
  if (outcome.location) reply.header('location', outcome.location)
  if (outcome.body && typeof outcome.body === 'object') reply.header('etag', etagOf(outcome.body))
  return reply.code(outcome.status).send(outcome.body)
}
