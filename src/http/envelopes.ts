/**
 * How REST answers with records: one record (with its ETag), a top-level collection (envelope A),
 * a nested one (envelope B), each reduced to the fields a client asked for (`fields=`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Page } from '../pagination/page.ts'
import type { JsonText } from '../db/json-text.ts'
import { etagOf, etagOfPart, etagOfVersion } from './etags.ts'
import { baseUrl } from './locations.ts'

const JSON_TYPE = 'application/json; charset=utf-8'

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
 * Sends records reduced by `fields` (decisions §16), tagged as a part (etags.ts, etagOfPart): never
 * with the full record's ETag. The route's serializer is compiled for full records only
 * (lazy-serializers.ts), so the part is written with JSON.stringify; its values come from the same
 * API objects.
 */
export function sendSparse(reply: FastifyReply, body: unknown): FastifyReply {
  const text = JSON.stringify(body)
  return reply.header('etag', etagOfPart(text)).type(JSON_TYPE).send(text)
}

/** One record: with its ETag when complete, reduced and tagged as a part when sparse. */
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

/**
 * A record as JSON text PostgreSQL built (decisions §6, "Reads built by the database"), with what
 * its ETag is made of: sent as it is, no serializer runs. A sparse answer (`fields=`) is the rare
 * case that parses it.
 */
export interface RecordText<T> {
  json: JsonText<T>
  id: number
  updated_at: string
}

/** The value a JSON text holds (JSON.parse of a text of type T). */
function parsed<T>(text: JsonText<T>): T {
  return JSON.parse(text)
}

/** sendRecord for a record as JSON text: tagged by its version, sent as it is. */
export function sendRecordText<T extends object>(reply: FastifyReply, record: RecordText<T>, fields?: string): FastifyReply {
  const names = parseFields(fields)
  if (names) return sendSparse(reply, pick(parsed(record.json), names))
  return reply.header('etag', etagOfVersion(record.id, record.updated_at)).type(JSON_TYPE).send(record.json)
}

/** The records of a page as one JSON array text, joined as they are. */
function arrayText<T>(records: ReadonlyArray<{ json: JsonText<T> }>): string {
  let text = '['
  for (let index = 0; index < records.length; index++) text += index === 0 ? records[index]!.json : `,${records[index]!.json}`
  return `${text}]`
}

/** sendCollection for records as JSON text: envelope A written around them, nothing serialized again. */
export function sendCollectionText<T extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  publicUrl: string | undefined,
  page: Page<{ json: JsonText<T> }>,
  fields: string | undefined,
): FastifyReply {
  if (fields !== undefined)
    return sendCollection(request, reply, publicUrl, { ...page, data: page.data.map((record) => parsed(record.json)) }, fields)
  const envelope = { next: nextPageUrl(request, publicUrl, page.nextCursor), cursor: page.nextCursor, total: page.total }
  return reply.type(JSON_TYPE).send(`{"data":${arrayText(page.data)},"page":${JSON.stringify(envelope)}}`)
}

/** sendNestedCollection for records as JSON text: envelope B written around them. */
export function sendNestedCollectionText<T extends object>(
  reply: FastifyReply,
  page: Page<{ json: JsonText<T> }>,
  fields: string | undefined,
): FastifyReply {
  if (fields !== undefined) return sendNestedCollection(reply, { ...page, data: page.data.map((record) => parsed(record.json)) }, fields)
  return reply.type(JSON_TYPE).send(`{"data":${arrayText(page.data)},"next_cursor":${JSON.stringify(page.nextCursor)}}`)
}
