/**
 * Text PostgreSQL cannot store (decisions §12): `text` and `jsonb` refuse U+0000, and a UTF-16
 * surrogate without its partner has no UTF-8 form. JSON and GraphQL variables can carry both
 * (`"\u0000"`, `"\ud800"`), so such input is refused with the field named, rather than failing as
 * a 500 in the database or being silently changed. REST (src/http/register-operations.ts) and
 * GraphQL (src/graphql/http/storable-text.ts) both call this.
 */

export interface UnstorableText {
  /** Keys and indexes from the root of the value to the offending string (or object key). */
  path: Array<string | number>
  message: string
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why `text` cannot be stored, or undefined when it can. */
export function unstorableReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains U+0000 (NUL), which cannot be stored'
  if (UNPAIRED_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text'
  return undefined
}

/** A position in the value being walked, linked to its parent so that no path is copied per level. */
interface Place {
  value: unknown
  key: string | number | undefined
  parent: Place | undefined
}

function pathOf(place: Place): Array<string | number> {
  const path: Array<string | number> = []
  for (let at: Place | undefined = place; at?.key !== undefined; at = at.parent) path.push(at.key)
  return path.reverse()
}

/**
 * Every string in `value` (a parsed JSON value: objects, arrays, strings, numbers…), object keys
 * included, that cannot be stored. Walks with an explicit stack and linked
 * paths: a 1 MiB body of nested arrays must neither overflow the call stack nor copy its path at
 * every level.
 */
export function findUnstorableText(value: unknown): UnstorableText[] {
  const found: UnstorableText[] = []
  const stack: Place[] = [{ value, key: undefined, parent: undefined }]
  while (stack.length > 0) {
    const place = stack.pop()!
    const current = place.value
    if (typeof current === 'string') {
      const message = unstorableReason(current)
      if (message) found.push({ path: pathOf(place), message })
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index -= 1) stack.push({ value: current[index], key: index, parent: place })
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current)
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, child] = entries[index]!
        stack.push({ value: child, key, parent: place })
      }
      for (const [key] of entries) {
        const message = unstorableReason(key)
        if (message) found.push({ path: [...pathOf(place), key], message: `has a name that ${message}` })
      }
    }
  }
  return found
}
