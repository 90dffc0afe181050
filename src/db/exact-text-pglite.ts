/**
 * A PGlite that reads text back exactly as it was stored. PGlite decodes each field of a result
 * row with a WHATWG TextDecoder, which takes a leading U+FEFF for a byte order mark and drops it:
 * a title stored as "\uFEFFHello" (the bytes EF BB BF are in the table) reads back as "Hello",
 * while PostgreSQL's driver (Buffer decoding) returns it whole. The client's text must survive
 * either way, so this PGlite keeps each response's bytes, which `execProtocol` returns
 * beside the messages it parsed, and gives back the U+FEFF of every field whose bytes begin with
 * one. PGlite runs every query of `query`, `exec` and transactions through `execProtocolStream`,
 * overridden here; everything else (locks, notifications, errors) is PGlite's own.
 */
import { type ExecProtocolOptions, type messages, PGlite } from '@electric-sql/pglite'

const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf])
/** The DataRow message's type byte ('D'), in PostgreSQL's wire protocol. */
const DATA_ROW = 0x44

/**
 * Puts back the leading U+FEFF each DataRow field lost in decoding. `data` is the response the
 * messages were parsed from: its DataRow messages are those of `parsed`, in order.
 */
export function restoreLeadingByteOrderMarks(parsed: messages.BackendMessage[], data: Uint8Array): messages.BackendMessage[] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  // Nearly every response has none: one native search, and nothing else is done.
  if (bytes.indexOf(BYTE_ORDER_MARK) === -1) return parsed
  const rows = parsed.filter((message): message is messages.DataRowMessage => message.name === 'dataRow')
  let row = 0
  let offset = 0
  // Each message: a type byte, then its length (4 bytes, counting itself), then its content.
  while (offset + 5 <= bytes.length) {
    const length = bytes.readUInt32BE(offset + 1)
    if (bytes[offset] === DATA_ROW) {
      const message = rows[row++]
      if (message === undefined) break
      // A DataRow: its field count (2 bytes), then each field's length (4 bytes, -1 for null) and bytes.
      let field = offset + 7
      for (let index = 0; index < message.fields.length; index++) {
        const fieldLength = bytes.readInt32BE(field)
        field += 4
        if (fieldLength >= 3 && bytes.compare(BYTE_ORDER_MARK, 0, 3, field, field + 3) === 0) {
          message.fields[index] = `\uFEFF${message.fields[index]}`
        }
        if (fieldLength > 0) field += fieldLength
      }
    }
    offset += 1 + length
  }
  return parsed
}

export class ExactTextPGlite extends PGlite {
  override async execProtocolStream(message: Uint8Array, options: ExecProtocolOptions = {}): Promise<messages.BackendMessage[]> {
    const { messages: parsed, data } = await this.execProtocol(message, options)
    return restoreLeadingByteOrderMarks(parsed, data)
  }
}
