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

/** A page as a connection: `page.cursors` are the records' positions, as the service made them. */
export function toConnection<T>(page: Pick<Page<T>, 'data' | 'nextCursor' | 'cursors'>, after: string | null | undefined): Connection<T> {
  const cursors = page.cursors
  if (!cursors || cursors.length !== page.data.length) throw new Error('a connection needs the cursor of every record of its page')
  const edges = page.data.map((node, index) => ({ cursor: cursors[index]!, node }))
  return {
    edges,
    pageInfo: {
      hasNextPage: page.nextCursor !== null,
      hasPreviousPage: after != null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  }
}
