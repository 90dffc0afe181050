/**
 * Relay-style connections over the services' keyset pages. A record's cursor lives on its edge,
 * outside the record, so a normalized client cache keeps one record per id whichever list fetched
 * it (the record-carried `cursor` field it replaces is deprecated). Connections page forward only.
 */
import type { Page } from '../../pagination/page.ts'

export interface Edge<T> {
  cursor: string
  node: T
}

export interface Connection<T> {
  edges: Array<Edge<T>>
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
}

/**
 * A connection whose `totalCount` can be asked for: `count` runs the list's count query (what
 * REST's `page.total` says for the same caller and filters), called by the field's resolver, so
 * only when a query selects it (decisions §16; priced in cost.ts).
 */
export type CountedConnection<T> = Connection<T> & { count: () => Promise<number> }

/** `totalCount`'s resolver, the same for every counted connection. */
export function totalCountOf(connection: { count: () => Promise<number> }): Promise<number> {
  return connection.count()
}

/** A page as a connection: `page.cursors` are the records' positions, as the service made them. */
export function toConnection<T>(page: Pick<Page<T>, 'data' | 'nextCursor' | 'cursors'>, after: string | null | undefined): Connection<T>
export function toConnection<T>(
  page: Pick<Page<T>, 'data' | 'nextCursor' | 'cursors'>,
  after: string | null | undefined,
  count: () => Promise<number>,
): CountedConnection<T>
export function toConnection<T>(
  page: Pick<Page<T>, 'data' | 'nextCursor' | 'cursors'>,
  after: string | null | undefined,
  count?: () => Promise<number>,
): Connection<T> {
  const cursors = page.cursors
  if (!cursors || cursors.length !== page.data.length) throw new Error('a connection needs the cursor of every record of its page')
  const edges = page.data.map((node, index) => ({ cursor: cursors[index]!, node }))
  return {
    ...(count ? { count } : {}),
    edges,
    pageInfo: {
      hasNextPage: page.nextCursor !== null,
      hasPreviousPage: after != null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  }
}
