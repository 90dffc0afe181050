/** Reading GraphQL arguments as domain values, with the same bounds REST has. */
import { badRequest } from '../../errors.ts'
import { parsePageSize } from '../../pagination/page-size.ts'
import { parseRecordId, RECORD_ID_RULE } from '../../record-id.ts'
import { fromGlobalId, type NumberKeyedNodeType } from './global-id.ts'

/**
 * An `ID` argument that names a record of `type`: its global id (global-id.ts), or its plain id,
 * canonical as REST path ids are (so the spec's `user(id: "2")` keeps working). Anything else, a
 * global id of another type included, is BAD_USER_INPUT (`INVALID_ID`).
 */
export function parseId(value: string | number, argument: string, type: NumberKeyedNodeType): number {
  const text = String(value)
  const id = parseRecordId(text) ?? globalIdKeyOf(text, type)
  if (id === undefined) {
    const rule = `must be the global id of a ${type} or a plain id that ${RECORD_ID_RULE.replace(/^must be /, 'is ')}`
    throw badRequest('INVALID_ID', `${argument} ${rule}.`, [{ in: 'body', name: argument, message: rule }])
  }
  return id
}

function globalIdKeyOf(text: string, type: NumberKeyedNodeType): number | undefined {
  const named = fromGlobalId(text)
  return named?.type === type ? named.key : undefined
}

/** `first`/`last`: the page size rule REST's `limit` follows too. */
export const parseCount = parsePageSize

/** The page a list field's `first`/`after` ask for: the same page request REST's `limit`/`cursor` make. */
export function pageOf(args: { first?: number | null; after?: string | null }): { cursor: string | undefined; limit: number } {
  return { cursor: args.after ?? undefined, limit: parseCount(args.first, 'first') }
}
