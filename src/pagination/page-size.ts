/**
 * How many records one page holds, on both styles: REST's `limit` and GraphQL's `first`/`last`
 * (and the page size the GraphQL cost model assumes when none is given). The contracts state the
 * same bounds (openapi.yaml's `Limit` parameter, schema.graphql's `first: Int = 20`);
 * test/pagination/page-size.test.ts checks that they agree with these constants.
 */
import { badRequest } from '../errors.ts'

export const MIN_PAGE_SIZE = 1
export const MAX_PAGE_SIZE = 100
export const DEFAULT_PAGE_SIZE = 20

/** A requested page size, the default when none was given; out of bounds is 400 INVALID_PAGE_SIZE. */
export function parsePageSize(value: number | null | undefined, argument: string, fallback = DEFAULT_PAGE_SIZE): number {
  const size = value ?? fallback
  if (!Number.isInteger(size) || size < MIN_PAGE_SIZE || size > MAX_PAGE_SIZE) {
    throw badRequest('INVALID_PAGE_SIZE', `${argument} must be between ${MIN_PAGE_SIZE} and ${MAX_PAGE_SIZE}.`, [
      { in: 'body', name: argument, message: `must be between ${MIN_PAGE_SIZE} and ${MAX_PAGE_SIZE}` },
    ])
  }
  return size
}
