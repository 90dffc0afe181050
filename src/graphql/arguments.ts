/** Reading GraphQL arguments as domain values, with the same bounds REST has. */
import { badRequest } from '../errors.ts'
import { parsePageSize } from '../pagination/page-size.ts'
import { parseRecordId, RECORD_ID_RULE } from '../record-id.ts'

/** An `ID` argument that names a record: canonical, as REST path ids are, or BAD_USER_INPUT. */
export function parseId(value: string | number, argument: string): number {
  const id = parseRecordId(String(value))
  if (id === undefined) {
    throw badRequest('INVALID_ID', `${argument} ${RECORD_ID_RULE}.`, [{ in: 'body', name: argument, message: RECORD_ID_RULE }])
  }
  return id
}

/** `first`/`last`: the page size rule REST's `limit` follows too. */
export const parseCount = parsePageSize

/** The page a list field's `first`/`after` ask for: the same page request REST's `limit`/`cursor` make. */
export function pageOf(args: { first?: number | null; after?: string | null }): { cursor: string | undefined; limit: number } {
  return { cursor: args.after ?? undefined, limit: parseCount(args.first, 'first') }
}
