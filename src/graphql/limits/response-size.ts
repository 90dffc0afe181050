/**
 * Output is bounded like input (decisions §13): a GraphQL response whose JSON would grow past
 * GRAPHQL_MAX_RESPONSE_BYTES is abandoned and answered with RESPONSE_TOO_LARGE instead.
 *
 * The cost limit bounds how many fields a response has, not how wide each is (an alias per
 * article body is up to 100,000 characters each), and serializing is where such a response
 * explodes: the resolvers hand back strings they already hold, and it is JSON.stringify that
 * builds hundreds of megabytes in one block of the event loop. So the execution result is measured
 * before it is serialized, by a walk that adds up the bytes its JSON would have and stops as soon
 * as the limit is passed, building no string.
 *
 * Decided: the answer is a request-level failure, errors only and no `data` (the data was
 * dropped, not null), with the status of a document refused by a limit: 422 with
 * `application/graphql-response+json`, 200 with `"data": null` with the legacy
 * `application/json`, as every refused request there. The operation did execute: a mutation's
 * changes stay committed, and the error says so. A subscription event too large gets the error in
 * place of its data on its own `next`; the subscription goes on.
 */
import type { ExecutionResult, GraphQLError } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import { ApiError } from '../../errors.ts'
import { locatedApiError } from '../errors.ts'
import { isObject } from '../http/request-problems.ts'

/** Characters JSON.stringify writes escaped: `"`, `\` and the control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes.
const ESCAPED = /["\\\u0000-\u001f]/

/** Below this length a string is measured character by character; above it, natively. */
const SHORT_STRING = 256

/** The bytes JSON.stringify writes for an ASCII character: `\"`, `\\`, `\n` and the like take two, `\u00XX` six. */
const ASCII_BYTES = Array.from({ length: 128 }, (_, code) => {
  if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return 2
  return code < 0x20 ? 6 : 1
})

/**
 * The bytes of `text` as a JSON string, quotes included. Unpaired surrogates, which
 * JSON.stringify writes as `\udxxx`, are counted as the three bytes of U+FFFD: text that holds
 * them is refused before it is stored (storable-text.ts).
 */
function jsonStringBytes(text: string): number {
  if (text.length > SHORT_STRING) {
    // Natively, and the escapes only when there are any: an article body is 100,000 characters.
    let bytes = Buffer.byteLength(text, 'utf8') + 2
    if (ESCAPED.test(text)) for (let i = 0; i < text.length; i++) bytes += (ASCII_BYTES[text.charCodeAt(i)] ?? 1) - 1
    return bytes
  }
  let bytes = 2
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += ASCII_BYTES[code] ?? 1
    else if (code < 0x800) bytes += 2
    // A surrogate pair is one four-byte character.
    else if (code >= 0xd800 && code < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** What JSON.stringify writes for `value` in an array (in an object, undefined ones are left out). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol'
}

/** `left` minus the JSON bytes of `value`, or a negative number as soon as they pass `left`. */
function bytesLeftAfter(value: unknown, left: number): number {
  if (left < 0) return left
  if (value === null || isOmitted(value)) return left - 4
  if (typeof value === 'string') return left - jsonStringBytes(value)
  if (typeof value === 'number') return left - (Number.isFinite(value) ? String(value).length : 4)
  if (typeof value === 'boolean') return left - (value ? 4 : 5)
  if (typeof value !== 'object') return left - String(value).length
  if (Array.isArray(value)) {
    // The brackets and the commas between items.
    let remaining = left - 1 - Math.max(value.length, 1)
    for (const item of value) {
      remaining = bytesLeftAfter(item, remaining)
      if (remaining < 0) return remaining
    }
    return remaining
  }
  // A Date, a GraphQLError: what they write is what their toJSON returns.
  const toJSON: unknown = Reflect.get(value, 'toJSON')
  if (typeof toJSON === 'function') return bytesLeftAfter(Reflect.apply(toJSON, value, []), left)
  if (!isObject(value)) return left
  let remaining = left - 2
  let first = true
  // for…in, the fastest walk of an object's keys, lists only own keys here as JSON.stringify does:
  // an execution result's objects have no prototype, or Object's.
  for (const key in value) {
    const item = value[key]
    if (isOmitted(item)) continue
    // The key, its colon, and the comma before every entry but the first.
    remaining -= jsonStringBytes(key) + (first ? 1 : 2)
    first = false
    remaining = bytesLeftAfter(item, remaining)
    if (remaining < 0) return remaining
  }
  return remaining
}

/** Whether JSON.stringify(value) would be longer than `limit` bytes (UTF-8), found without building it. */
export function jsonLongerThan(value: unknown, limit: number): boolean {
  return bytesLeftAfter(value, limit) < 0
}

const ASK_LESS = 'Select fewer or narrower fields, or fewer records.'

function responseTooLarge(limit: number, detail: string): GraphQLError {
  return locatedApiError(new ApiError('RESPONSE_TOO_LARGE', detail, { extensions: { maxResponseBytes: limit } }))
}

/**
 * The onResolution hook: a response over the limit is replaced by the error. Thrown, it reaches
 * the error formatter as a request-level error: no `data`, and the status above.
 */
export function boundResponses(maxBytes: number) {
  return async function responseSize(execution: ExecutionResult, _context: MercuriusContext): Promise<void> {
    if (!jsonLongerThan(execution, maxBytes)) return
    throw responseTooLarge(
      maxBytes,
      `The response would be larger than ${maxBytes} bytes, the most one response may carry, and was not sent; the operation did run (a mutation's changes are kept). ${ASK_LESS}`,
    )
  }
}

/**
 * The onSubscriptionResolution hook: an event over the limit is sent with the error in place of
 * its data. (A throw there would close the whole connection.)
 */
export function boundSubscriptionEvents(maxBytes: number) {
  return async function eventSize(execution: ExecutionResult, _context: MercuriusContext): Promise<void> {
    if (!jsonLongerThan(execution, maxBytes)) return
    execution.data = null
    execution.errors = [
      responseTooLarge(
        maxBytes,
        `This event would be larger than ${maxBytes} bytes, the most one event may carry, and was not sent. ${ASK_LESS}`,
      ),
    ]
  }
}
