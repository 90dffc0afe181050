/**
 * Record ids on the wire (decisions §12): canonical decimal integers, `^[1-9][0-9]{0,9}$` up to
 * PostgreSQL's `integer` maximum. Anything else (`0x10`, `3.0`, ` 3`, `+3`, `03`, `1e1`) is refused
 * rather than read as some number, so that a request can never reach another record than the one
 * it wrote. REST path ids and GraphQL `ID` arguments both go through here.
 */
export const MAX_RECORD_ID = 2_147_483_647

export const RECORD_ID_RULE = `must be a decimal integer id from 1 to ${MAX_RECORD_ID}, without sign, leading zeros, spaces or exponent`

/** The id `text` stands for, or undefined when it is not a canonical record id. */
export function parseRecordId(text: string): number | undefined {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) return undefined
  const id = Number(text)
  return id <= MAX_RECORD_ID ? id : undefined
}
