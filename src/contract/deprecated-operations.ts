/**
 * What openapi.yaml says of its deprecated operations (decisions §13, "Contract evolution"): read
 * once when the app is built, for the contract router's headers (http/register-operations.ts) and
 * the deprecation plugin's counts (plugins/deprecation.ts).
 */
export interface DeprecatedOperation {
  operationId: string
  /** `Deprecation` (RFC 9745): `@<seconds since the epoch>`. */
  deprecation: string
  /** `Sunset` (RFC 8594): an HTTP-date. */
  sunset?: string
  /** The replacing operation's URL template (`/api/v1/orders/{id}/items`), for `Link`. */
  successorUrl?: string
}

type OperationObject = {
  operationId?: string
  deprecated?: boolean
  'x-deprecated-at'?: unknown
  'x-sunset'?: unknown
  'x-deprecated-by'?: unknown
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

function contractDate(value: unknown, where: string): Date {
  // YAML reads an unquoted 2027-06-30 as a Date already; a quoted one is a string.
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : new Date(Number.NaN)
  if (Number.isNaN(date.getTime())) throw new Error(`openapi.yaml: ${where} must be a date (2027-06-30) or a date-time`)
  return date
}

/**
 * The deprecated operations of an OpenAPI document, with their headers' values, by operationId. A
 * deprecated operation must say since when (`x-deprecated-at`); a sunset before that date, or a
 * replacement that is no operation of the contract or needs path parameters the deprecated one does
 * not have, is a contract error, refused when the app is built.
 */
export function deprecatedOperations(document: Record<string, unknown>): Map<string, DeprecatedOperation> {
  // Paths are under the first server's path, as routes are (codegen/openapi.ts).
  const servers = document.servers as { url?: unknown }[] | undefined
  const basePath = new URL(String(servers?.[0]?.url ?? '/'), 'http://localhost').pathname.replace(/\/+$/, '')
  const paths = (document.paths ?? {}) as Record<string, Record<string, OperationObject>>
  const byId = new Map<string, { path: string; operation: OperationObject }>()
  for (const [path, item] of Object.entries(paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method]
      if (operation?.operationId) byId.set(operation.operationId, { path, operation })
    }
  }
  const pathParameters = (path: string) => new Set([...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string))
  const deprecated = new Map<string, DeprecatedOperation>()
  for (const [operationId, { path, operation }] of byId) {
    if (operation.deprecated !== true) continue
    const where = `${operationId} (deprecated)`
    if (operation['x-deprecated-at'] === undefined)
      throw new Error(`openapi.yaml: ${where} needs x-deprecated-at, the date it was deprecated`)
    const deprecatedAt = contractDate(operation['x-deprecated-at'], `${where} x-deprecated-at`)
    const entry: DeprecatedOperation = { operationId, deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}` }
    if (operation['x-sunset'] !== undefined) {
      const sunset = contractDate(operation['x-sunset'], `${where} x-sunset`)
      // RFC 9745 §5: a resource is not sunset before it is deprecated.
      if (sunset < deprecatedAt) throw new Error(`openapi.yaml: ${where} has x-sunset before x-deprecated-at`)
      entry.sunset = sunset.toUTCString()
    }
    const successorId = operation['x-deprecated-by']
    if (successorId !== undefined) {
      const successor = typeof successorId === 'string' ? byId.get(successorId) : undefined
      if (!successor) throw new Error(`openapi.yaml: ${where} x-deprecated-by must be the operationId of another operation`)
      const own = pathParameters(path)
      const missing = [...pathParameters(successor.path)].filter((name) => !own.has(name))
      if (missing.length > 0)
        throw new Error(`openapi.yaml: ${where}'s replacement needs path parameters it does not have: ${missing.join(', ')}`)
      entry.successorUrl = `${basePath}${successor.path}`
    }
    deprecated.set(operationId, entry)
  }
  return deprecated
}
