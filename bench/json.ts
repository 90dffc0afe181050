/** Reading parsed JSON (`unknown`) without casts: a field, a list, a copy without a field. */

/** A field of a JSON object, or undefined. */
export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && key in value ? Reflect.get(value, key) : undefined
}

/** The elements of a JSON array, or none. */
export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

/** A copy of a JSON value without any field named `name`, at any depth. */
export function without(value: unknown, name: string): unknown {
  if (Array.isArray(value)) return value.map((element) => without(element, name))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).flatMap(([key, inner]) => (key === name ? [] : [[key, without(inner, name)]])))
}

/** A copy of a JSON object with the value of its field `name` (where it has one) replaced, in place in its key order. */
export function replaced(value: unknown, name: string, replace: (inner: unknown) => unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, key === name ? replace(inner) : inner]))
}
