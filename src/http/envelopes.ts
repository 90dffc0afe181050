/**
 * How REST answers with records: one record (with its ETag), a top-level collection (envelope A),
 * a nested one (envelope B), each reduced to the fields a client asked for (`fields=`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Page } from '../pagination/page.ts'
import { etagOf } from '../plugins/http-caching.ts'
import { baseUrl } from './locations.ts'

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
 * `cursor` is the raw cursor of `next`, so SDKs need not parse the URL.
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
