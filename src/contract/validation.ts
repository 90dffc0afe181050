/**
 * Request validation with two AJV instances: bodies are checked exactly as sent (no type coercion:
 * `"qty": "2"` is an error), while path, query and header values, which are always strings on the
 * wire, are coerced to their documented types, except that a path id must first be a canonical
 * decimal integer (src/record-id.ts). Both report every error, not only the first, and
 * never strip unknown properties (the contract's `additionalProperties: false` rejects them).
 */
import type { ErrorObject, ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import type { FieldError, ProblemLocation } from '../errors.ts'
import { parseRecordId, RECORD_ID_RULE } from '../record-id.ts'
import { findUnstorableText } from '../storable-text.ts'

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020

/**
 * AJV for the contract's own schemas: OpenAPI 3.1's dialect is JSON Schema 2020-12, and strict
 * mode makes a keyword AJV does not know fail when its schema compiles instead of being ignored.
 */
export function createAjv(coerceTypes: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    coerceTypes,
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    strict: true,
    // `type: [integer, 'null']` is how OpenAPI 3.1 writes a nullable value.
    allowUnionTypes: true,
  })
  addFormats(ajv)
  // The contract's integer formats, checked rather than ignored.
  ajv.addFormat('int32', {
    type: 'number',
    validate: (value: number) => Number.isInteger(value) && value >= -2_147_483_648 && value <= 2_147_483_647,
  })
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) })
  return ajv
}

/** The path parameters a schema types as integers: in this contract, every one is a record id. */
function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  return Object.keys(properties).filter((name) => properties[name]?.type === 'integer')
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv(false)
  const parameterAjv = createAjv(true)
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : parameterAjv
    // Compiled on first use rather than when the route is registered: compiling every schema of
    // every operation was the largest part of start-up that was ours, and most
    // processes never see most operations. AJV caches compiled schemas itself, so shared
    // component schemas compile once. test/http/lazy-compilation.test.ts compiles them all.
    let validate: ValidateFunction | undefined
    const check = (data: unknown) => {
      validate ??= ajv.compile(schema as object)
      return validate(data) ? { value: data } : { error: validate.errors ?? [] }
    }
    if (httpPart !== 'params') return check
    // Coercion would read `0x10` as 16 and `3.0` as 3: path ids are checked as the strings they
    // arrived as, before AJV sees them (decisions §12).
    const ids = integerProperties(schema)
    return (data: unknown) => {
      const params = data as Record<string, unknown>
      const errors: ErrorObject[] = ids
        .filter((name) => typeof params[name] === 'string' && parseRecordId(params[name]) === undefined)
        .map((name) => ({ instancePath: `/${name}`, schemaPath: '#/recordId', keyword: 'recordId', params: {}, message: RECORD_ID_RULE }))
      return errors.length > 0 ? { error: errors } : check(data)
    }
  }
}

const locations: Record<string, ProblemLocation> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
}

function fieldName(error: ErrorObject, location: ProblemLocation): string {
  const params = error.params as Record<string, unknown>
  let pointer = error.instancePath
  if (error.keyword === 'required') pointer += `/${String(params.missingProperty)}`
  if (error.keyword === 'additionalProperties') pointer += `/${String(params.additionalProperty)}`
  if (location === 'body') return pointer === '' ? '/' : pointer
  // Parameters are named as the client wrote them, not as JSON pointers.
  return pointer.replace(/^\//, '').split('/')[0] ?? ''
}

function fieldMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return 'is required'
    case 'additionalProperties':
      return 'is not allowed here'
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`
    default:
      return error.message ?? 'is invalid'
  }
}

export function fieldErrorsFromValidation(errors: ErrorObject[] | unknown, context: string | undefined): FieldError[] {
  const location = locations[context ?? 'body'] ?? 'body'
  // `type: [integer, 'null']` fails as one error; named per type, as each alternative of a union is.
  const list = ((Array.isArray(errors) ? errors : []) as ErrorObject[]).flatMap((error) => {
    const types = (error.params as { type?: unknown }).type
    if (error.keyword !== 'type' || !Array.isArray(types)) return [error]
    return types.map((type) => ({ ...error, message: `must be ${String(type)}` }))
  })
  // A nullable or union value fails every branch; the branch errors say more than "anyOf".
  const specific = list.filter((error) => error.keyword !== 'anyOf' && error.keyword !== 'oneOf')
  // An enum is generated as a union of literals: one "const" error per allowed value, which say
  // more together ("must be one of: …") than each alone.
  const allowed = new Map<string, unknown[]>()
  for (const error of specific) {
    if (error.keyword !== 'const') continue
    const values = allowed.get(error.instancePath) ?? []
    values.push((error.params as { allowedValue?: unknown }).allowedValue)
    allowed.set(error.instancePath, values)
  }
  const seen = new Set<string>()
  const result: FieldError[] = []
  for (const error of specific.length > 0 ? specific : list) {
    const name = fieldName(error, location)
    const choices = error.keyword === 'const' ? allowed.get(error.instancePath) : undefined
    const message = choices ? `must be one of: ${choices.join(', ')}` : fieldMessage(error)
    const key = `${name}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    result.push({ in: location, name, message })
  }
  return result
}

/**
 * Strings in a parsed body or query string that PostgreSQL cannot store, named as the other
 * validation errors are: a JSON pointer in the body, the parameter in the query string.
 */
export function unstorableTextErrors(value: unknown, location: 'body' | 'query'): FieldError[] {
  return findUnstorableText(value).map(({ path, message }) => ({
    in: location,
    name:
      location === 'body' ? `/${path.map((key) => String(key).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}` : String(path[0] ?? ''),
    message,
  }))
}
