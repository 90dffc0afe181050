/**
 * Opaque, tamper-evident keyset cursors (decisions §5). A cursor names the position after the last
 * record of a page — the sort key's value and the id — and carries the sort and filter it was made
 * for, signed with HMAC-SHA256 so that an edited or foreign cursor is refused. REST lists and
 * GraphQL `after` arguments share this codec.
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto'
import { badRequest } from '../errors.ts'

export type KeyValue = string | number

export interface CursorPosition {
  /** Which list this cursor belongs to, e.g. "orders". A cursor of another list is refused. */
  list: string
  /** The sort it was made for, e.g. "-created_at". */
  sort: string
  /** The filters it was made for, e.g. { status: "paid", user: 2 }. */
  filter: Record<string, KeyValue | null>
  /** The sort key value and the id of the last record returned. */
  key: [KeyValue, number]
}

export interface CursorCodec {
  encode(position: CursorPosition): string
  /** Throws a 400 INVALID_CURSOR problem for anything this server did not issue. */
  decode(cursor: string, list: string): CursorPosition
}

export function createCursorCodec(secret: string): CursorCodec {
  // A key of its own, derived from the server secret, so a cursor can never pass as a token.
  // A KeyObject, made once: Node checks and copies a raw key on every createHmac (measured as
  // most of a cursor's cost).
  const key = createSecretKey(createHmac('sha256', secret).update('keyset-cursor-v1').digest())
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, 16)

  return {
    encode(position) {
      const payload = Buffer.from(JSON.stringify([position.list, position.sort, position.filter, position.key])).toString('base64url')
      return `${payload}.${sign(payload).toString('base64url')}`
    },
    decode(cursor, list) {
      const invalid = () =>
        badRequest('INVALID_CURSOR', 'The cursor is not one this server issued for this list.', [
          { in: 'query', name: 'cursor', message: 'is not a valid cursor for this list' },
        ])
      const [payload, signature, extra] = cursor.split('.')
      if (!payload || !signature || extra !== undefined) throw invalid()
      const expected = sign(payload)
      const given = Buffer.from(signature, 'base64url')
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid()
      const [decodedList, sort, filter, position] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [
        string,
        string,
        Record<string, KeyValue | null>,
        [KeyValue, number],
      ]
      if (decodedList !== list) throw invalid()
      return { list, sort, filter, key: position }
    },
  }
}

/** Parses `sort=-created_at` against a list's allowed fields; the contract already restricts the values. */
export function parseSort<Field extends string>(sort: string, allowed: readonly Field[]): { field: Field; descending: boolean } {
  const descending = sort.startsWith('-')
  const field = (descending ? sort.slice(1) : sort) as Field
  if (!allowed.includes(field)) {
    throw badRequest('INVALID_SORT', `Cannot sort on "${field}"; allowed: ${allowed.join(', ')}.`, [
      { in: 'query', name: 'sort', message: `must be one of ${allowed.flatMap((f) => [f, `-${f}`]).join(', ')}` },
    ])
  }
  return { field, descending }
}

/**
 * Resolves the position a list request continues from. Next to a cursor, a sort or filter that
 * differs from the cursor's is 400: a cursor keeps the sort and filter it was made for.
 */
export function resumePosition(
  codec: CursorCodec,
  list: string,
  cursor: string | undefined,
  requested: { sort: string | undefined; filter: Record<string, KeyValue | null | undefined> },
  defaults: { sort: string },
): { sort: string; filter: Record<string, KeyValue | null>; after: [KeyValue, number] | undefined } {
  const filter = Object.fromEntries(Object.entries(requested.filter).map(([k, v]) => [k, v ?? null]))
  if (cursor === undefined) return { sort: requested.sort ?? defaults.sort, filter, after: undefined }
  const position = codec.decode(cursor, list)
  if (requested.sort !== undefined && requested.sort !== position.sort) {
    throw badRequest('CURSOR_MISMATCH', `This cursor was made for sort=${position.sort}.`, [
      { in: 'query', name: 'sort', message: `conflicts with the cursor (made for ${position.sort})` },
    ])
  }
  for (const [name, value] of Object.entries(filter)) {
    if (value !== null && value !== (position.filter[name] ?? null)) {
      throw badRequest('CURSOR_MISMATCH', `This cursor was made for a different ${name} filter.`, [
        { in: 'query', name, message: 'conflicts with the cursor' },
      ])
    }
  }
  return { sort: position.sort, filter: position.filter, after: position.key }
}
