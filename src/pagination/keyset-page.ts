/**
 * The service half of keyset paging (the SQL half is src/db/keyset.ts): where a list request
 * resumes, and how the limit + 1 rows a repository returns become a page with cursors.
 */
import { type CursorCodec, type KeyValue, parseSort, resumePosition } from './cursor.ts'

export interface PageStart<Field extends string> {
  /** The sort as written in cursors, e.g. "-created_at". */
  sort: string
  sortBy: { field: Field; descending: boolean }
  filter: Record<string, KeyValue | null>
  after: [KeyValue, number] | undefined
}

/**
 * Where a request for a sorted list starts: from its cursor (which keeps the sort and filter it was
 * made for) or from the top, with the sort checked against the list's fields.
 */
export function startOfPage<Field extends string>(
  codec: CursorCodec,
  list: string,
  cursor: string | undefined,
  requested: { sort: string | undefined; filter: Record<string, KeyValue | null | undefined> },
  defaults: { sort: string; fields: readonly Field[] },
): PageStart<Field> {
  const position = resumePosition(codec, list, cursor, requested, { sort: defaults.sort })
  return { ...position, sortBy: parseSort(position.sort, defaults.fields) }
}

export interface CutPage<Row> {
  rows: Row[]
  /** The cursor of each row of the page, to resume right after it (left out when not asked for). */
  cursors?: string[]
  /** The last row's cursor when another row followed, else null. */
  nextCursor: string | null
}

/**
 * Which cursors a page makes. Each cursor is an HMAC, so a page makes only those its caller shows:
 * `every` row's (a connection's edges), the `next` page's only (a REST list), or `none` (a
 * GraphQL list field, which shows no position: its nextCursor is null whatever follows).
 */
export type PageCursors = 'every' | 'next' | 'none'

/** A repository's limit + 1 rows as a page: the first `limit` rows, the cursors asked for, and whether more follow. */
export function cutPage<Row>(
  rows: readonly Row[],
  limit: number,
  cursorOf: (row: Row) => string,
  made: PageCursors = 'every',
): CutPage<Row> {
  const page = rows.slice(0, limit)
  const more = rows.length > limit
  if (made === 'none') return { rows: page, nextCursor: null }
  if (made === 'next') return { rows: page, nextCursor: more && page.length > 0 ? cursorOf(page.at(-1)!) : null }
  const cursors = page.map(cursorOf)
  return { rows: page, cursors, nextCursor: more ? (cursors.at(-1) ?? null) : null }
}

/** A row's sort key as a cursor holds it: timestamps as ISO strings, as the API writes them. */
export function sortKeyOf<Field extends string>(row: Record<Field, Date | string | number>, field: Field): KeyValue {
  const value: Date | string | number = row[field]
  return value instanceof Date ? value.toISOString() : value
}
