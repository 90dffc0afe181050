/** Reading GraphQL arguments as domain values, with the same bounds REST has. */
import { badRequest } from '../errors.ts'
import { parseRecordId, RECORD_ID_RULE } from '../record-id.ts'

/** An `ID` argument that names a record: canonical, as REST path ids are, or BAD_USER_INPUT. */
export function parseId(value: string | number, argument: string): number {
  const id = parseRecordId(String(value))
  if (id === undefined) {
    throw badRequest('INVALID_ID', `${argument} ${RECORD_ID_RULE}.`, [{ in: 'body', name: argument, message: RECORD_ID_RULE }])
  }
  return id
}

/** `first`/`last`: 1-100, like REST's `limit`. */
export function parseCount(value: number | null | undefined, argument: string, fallback = 20): number {
  const count = value ?? fallback
  if (!Number.isInteger(count) || count < 1 || count > 100) {
    throw badRequest('INVALID_PAGE_SIZE', `${argument} must be between 1 and 100.`, [
      { in: 'body', name: argument, message: 'must be between 1 and 100' },
    ])
  }
  return count
}
