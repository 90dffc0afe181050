/**
 * Checks a response against openapi.yaml itself — not against the schemas generated from it, so the
 * server is never checked only against its own output. A response must be documented for its
 * operation (its status; `default` stands only for the 5xx no client can foresee, so every 4xx the
 * service sends is listed by status), carry a documented media type, match that schema, and carry
 * the headers the contract marks required.
 */
import { readFileSync } from 'node:fs'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { parseOpenApi } from './contract-files.ts'

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void

type Json = Record<string, unknown>
interface ContractResponse {
  content?: Record<string, { schema: Json }>
  headers?: Record<string, unknown>
}

const document = parseOpenApi(readFileSync(new URL('../openapi.yaml', import.meta.url), 'utf8')) as Json & {
  servers: Array<{ url: string }>
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, ContractResponse | { $ref: string }> }>>
  components: { responses: Record<string, ContractResponse> }
}
const prefix = new URL(document.servers[0]!.url).pathname

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item))
  if (value && typeof value === 'object') {
    const out: Json = {}
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') out[key] = `contract.json${inner}`
      else out[key] = rewriteRefs(inner)
    }
    return out
  }
  return value
}

const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
// No exception: a sparse fieldset (`fields=`) is described by the contract itself (each record of a
// read is the full record or its `…Sparse` part; decisions §16), so every response is checked
// against exactly what openapi.yaml says for its Content-Type.
ajv.addSchema({ ...(rewriteRefs({ components: document.components }) as Json), $id: 'contract.json' })

const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({
    method: method.toUpperCase(),
    pattern: new RegExp(`^${prefix}${path.replace(/\{\w+\}/g, '[^/]+')}$`),
    operation,
  })),
)

/**
 * The validator of a schema of openapi.yaml, compiled once per schema object: Ajv caches what it
 * compiled by the object it was given, and each rewrite of the $refs is a new object, so compiling
 * per response cost milliseconds of CPU on every request a test makes.
 */
const validators = new WeakMap<object, ValidateFunction>()
function validatorOf(schema: unknown): ValidateFunction {
  if (!schema || typeof schema !== 'object') return ajv.compile(schema as boolean)
  let validate = validators.get(schema)
  if (!validate) {
    validate = ajv.compile(rewriteRefs(schema) as Json)
    validators.set(schema, validate)
  }
  return validate
}

/** Checks a value against a schema written in openapi.yaml ($refs resolved in its components): the errors, or none. */
export function contractSchemaErrors(schema: unknown, value: unknown): string | undefined {
  const validate = validatorOf(schema)
  return validate(value) ? undefined : ajv.errorsText(validate.errors)
}

export interface ObservedResponse {
  method: string
  url: string
  statusCode: number
  headers: Record<string, unknown>
  body: string
}

/** The problems with a response, empty when it matches the contract. */
export function contractViolations(response: ObservedResponse): string[] {
  const url = new URL(response.url, 'http://localhost')
  const found = operations.find((candidate) => candidate.method === response.method && candidate.pattern.test(url.pathname))
  if (!found) return [`${response.method} ${url.pathname} is not an operation of openapi.yaml`]
  const { operation } = found
  const documented =
    operation.responses[String(response.statusCode)] ?? (response.statusCode >= 500 ? operation.responses.default : undefined)
  if (!documented) return [`${operation.operationId}: status ${response.statusCode} is not documented`]
  const resolved = (
    '$ref' in documented ? document.components.responses[String(documented.$ref).split('/').pop()!] : documented
  ) as ContractResponse
  const problems: string[] = []
  const contentType = String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
  if (!resolved.content) {
    if (response.body !== '') problems.push(`${operation.operationId} ${response.statusCode}: documented without a body, got one`)
    return problems
  }
  const media = resolved.content[contentType]
  if (!media) return [`${operation.operationId} ${response.statusCode}: media type "${contentType}" is not documented`]
  if (contentType.endsWith('json')) {
    const validate = validatorOf(media.schema)
    let body: unknown
    try {
      body = JSON.parse(response.body)
    } catch {
      return [`${operation.operationId} ${response.statusCode}: body is not JSON`]
    }
    if (!validate(body)) {
      problems.push(`${operation.operationId} ${response.statusCode}: ${ajv.errorsText(validate.errors)} in ${response.body.slice(0, 300)}`)
    }
  }
  return problems
}
