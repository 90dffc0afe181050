/** One page of a list, as services return it to both styles. */
export interface Page<T> {
  data: T[]
  /**
   * Every record matching the filter, over all pages (envelope A's `page.total`). A list that
   * shows no total (envelope B, GraphQL) need not count: it carries the page's length.
   */
  total: number
  nextCursor: string | null
  /** The cursor of each record of `data`, to resume right after it (GraphQL's `cursor` field), when asked for. */
  cursors?: string[]
}
