/**
 * Relay-style connections over the services' keyset pages. A record's cursor lives on its edge,
 * outside the record, so a normalized client cache keeps one record per id whichever list fetched
 * it (the record-carried `cursor` field it replaces is deprecated). Connections page forward only.
 */
import type { GraphQLResolveInfo } from 'graphql'
import type { Page } from '../../pagination/page.ts'
import { selectedFields } from './selects-field.ts'

export interface Edge<T> {
  cursor: string
  node: T
}

export interface Connection<T> {
  edges: Array<Edge<T>>
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
}

/**
 * A connection whose `totalCount` can be asked for: the page was read with its total (what REST's
 * `page.total` says for the same caller and filters) in the page's own statement, when the query
 * selects `totalCount` (decisions §16, §17; priced in cost.ts), and the field resolves to it.
 */
export type CountedConnection<T> = Connection<T> & { totalCount?: number }

/** Whether a connection field's selection asks for its `totalCount`: its page is then read with its total. */
export function selectsTotalCount(info: GraphQLResolveInfo): boolean {
  return selectedFields(info).has('totalCount')
}

/** A page as a connection: `page.cursors` are the records' positions, as the service made them. */
export function toConnection<T>(page: Pick<Page<T>, 'data' | 'nextCursor' | 'cursors'>, after: string | null | undefined): Connection<T>
export function toConnection<T>(
  page: Pick<Page<T>, 'data' | 'nextCursor' | 'cursors' | 'total'>,
  after: string | null | undefined,
  counted: { total: boolean },
): CountedConnection<T>
export function toConnection<T>(
  page: Pick<Page<T>, 'data' | 'nextCursor' | 'cursors'> & Partial<Pick<Page<T>, 'total'>>,
  after: string | null | undefined,
  counted?: { total: boolean },
): Connection<T> | CountedConnection<T> {
  const cursors = page.cursors
  if (!cursors || cursors.length !== page.data.length) throw new Error('a connection needs the cursor of every record of its page')
  const edges = page.data.map((node, index) => ({ cursor: cursors[index]!, node }))
  return {
    ...(counted?.total ? { totalCount: page.total } : {}),
    edges,
    pageInfo: {
      hasNextPage: page.nextCursor !== null,
      hasPreviousPage: after != null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  }
}
