/**
 * openapi.yaml → src/generated/openapi/: TypeBox schemas for every component schema, and for every
 * operation its Fastify route schema (params, querystring, headers, body, response) plus static
 * types. Routes validate and serialize with exactly these schemas, so the contract is enforced in
 * both directions. Unsupported JSON Schema keywords fail the generation instead of being dropped.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parse } from 'yaml'
import { banner, type GeneratedFile } from './generated-file.ts'

type JsonSchema = Record<string, unknown>

interface OpenApiDocument {
  servers?: Array<{ url: string }>
  security?: Array<Record<string, string[]>>
  paths: Record<string, Record<string, Operation | unknown>>
  components: {
    schemas?: Record<string, JsonSchema>
    parameters?: Record<string, Parameter>
    responses?: Record<string, Response>
    requestBodies?: Record<string, RequestBody>
  }
}

interface Parameter {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  required?: boolean
  schema: JsonSchema
}

interface MediaType {
  schema?: JsonSchema
}

interface RequestBody {
  required?: boolean
  content: Record<string, MediaType>
}

interface Response {
  content?: Record<string, MediaType>
}

interface Operation {
  operationId: string
  tags?: string[]
  security?: Array<Record<string, string[]>>
  'x-required-scopes'?: string[]
  parameters?: Array<Parameter | { $ref: string }>
  requestBody?: RequestBody | { $ref: string }
  responses: Record<string, Response | { $ref: string }>
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const

/** Keywords that only annotate: dropped from the generated validators. */
const ANNOTATIONS = new Set(['description', 'examples', 'example', 'title', 'deprecated', 'summary', '$comment', 'externalDocs'])
/** Keywords copied as TypeBox options. */
const OPTIONS = new Set([
  'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'default', 'readOnly', 'writeOnly', 'minProperties', 'maxProperties',
])
const STRUCTURE = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', '$ref', 'anyOf', 'oneOf'])

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1)
const literal = (value: unknown) => JSON.stringify(value).replace(/\u2028|\u2029/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)
const key = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name))

function resolve<T>(document: OpenApiDocument, value: T | { $ref: string }): T {
  if (value && typeof value === 'object' && '$ref' in value && typeof value.$ref === 'string') {
    const [, , section, name] = value.$ref.split('/') as [string, string, keyof OpenApiDocument['components'], string]
    const target = document.components[section]?.[name]
    if (!target) throw new Error(`unresolvable $ref ${value.$ref}`)
    return resolve(document, target as T | { $ref: string })
  }
  return value as T
}

function schemaRefName(ref: string): string {
  const match = /^#\/components\/schemas\/([\w.-]+)$/.exec(ref)
  if (!match) throw new Error(`only #/components/schemas refs may appear inside schemas, got ${ref}`)
  return match[1]!
}

class SchemaWriter {
  constructor(private readonly where: string) {}

  options(schema: JsonSchema, extra: Record<string, unknown> = {}): string {
    const options: Record<string, unknown> = { ...extra }
    for (const [name, value] of Object.entries(schema)) {
      if (OPTIONS.has(name)) options[name] = value
      else if (!ANNOTATIONS.has(name) && !STRUCTURE.has(name) && !name.startsWith('x-')) {
        throw new Error(`${this.where}: unsupported JSON Schema keyword "${name}"`)
      }
    }
    const entries = Object.entries(options)
    return entries.length === 0 ? '' : `{ ${entries.map(([k, v]) => `${key(k)}: ${literal(v)}`).join(', ')} }`
  }

  write(schema: JsonSchema, indent = ''): string {
    if (typeof schema.$ref === 'string') return `${schemaRefName(schema.$ref)}Schema`
    const withOptions = (call: string, args: string[], extra?: Record<string, unknown>) => {
      const options = this.options(schema, extra)
      return `${call}(${[...args, ...(options ? [options] : [])].join(', ')})`
    }
    if (Array.isArray(schema.enum)) {
      const members = schema.enum.map((value) => (value === null ? 'Type.Null()' : `Type.Literal(${literal(value)})`))
      return withOptions('Type.Union', [`[${members.join(', ')}]`])
    }
    if ('const' in schema) return withOptions('Type.Literal', [literal(schema.const)])
    const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined
    if (union) return withOptions('Type.Union', [`[${union.map((member) => this.write(member, indent)).join(', ')}]`])
    if (Array.isArray(schema.type)) {
      const types = schema.type as string[]
      const nonNull = types.filter((type) => type !== 'null')
      const members = nonNull.map((type) => this.write({ ...schema, type }, indent))
      if (types.includes('null')) members.push('Type.Null()')
      return `Type.Union([${members.join(', ')}])`
    }
    switch (schema.type) {
      case 'string':
        return withOptions('Type.String', [])
      case 'integer':
        return withOptions('Type.Integer', [])
      case 'number':
        return withOptions('Type.Number', [])
      case 'boolean':
        return withOptions('Type.Boolean', [])
      case 'null':
        return withOptions('Type.Null', [])
      case 'array':
        if (!schema.items) throw new Error(`${this.where}: an array needs items`)
        return withOptions('Type.Array', [this.write(schema.items as JsonSchema, indent)])
      case 'object':
      case undefined: {
        if (schema.type === undefined && !schema.properties) throw new Error(`${this.where}: a schema needs a type`)
        const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
        const required = new Set((schema.required ?? []) as string[])
        const inner = `${indent}  `
        const lines = Object.entries(properties).map(([name, property]) => {
          const code = this.write(property, inner)
          return `${inner}${key(name)}: ${required.has(name) ? code : `Type.Optional(${code})`},`
        })
        const extra: Record<string, unknown> = {}
        if (schema.additionalProperties === false) extra.additionalProperties = false
        else if (schema.additionalProperties !== undefined && schema.additionalProperties !== true) {
          throw new Error(`${this.where}: only additionalProperties true or false is supported`)
        }
        const body = lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`
        const options = this.options(schema, extra)
        return `Type.Object(${body}${options ? `, ${options}` : ''})`
      }
      default:
        throw new Error(`${this.where}: unsupported type ${String(schema.type)}`)
    }
  }
}

function schemaDependencies(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) schemaDependencies(item, found)
  else if (schema && typeof schema === 'object') {
    for (const [name, value] of Object.entries(schema)) {
      if (name === '$ref' && typeof value === 'string') found.add(schemaRefName(value))
      else if (!ANNOTATIONS.has(name)) schemaDependencies(value, found)
    }
  }
  return found
}

function orderSchemas(schemas: Record<string, JsonSchema>): string[] {
  const ordered: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (name: string, chain: string[]) => {
    if (state.get(name) === 'done') return
    if (state.get(name) === 'visiting') throw new Error(`schema cycle: ${[...chain, name].join(' → ')}`)
    if (!schemas[name]) throw new Error(`unknown schema ${name} (from ${chain.join(' → ')})`)
    state.set(name, 'visiting')
    for (const dependency of [...schemaDependencies(schemas[name])].sort()) visit(dependency, [...chain, name])
    state.set(name, 'done')
    ordered.push(name)
  }
  for (const name of Object.keys(schemas)) visit(name, [])
  return ordered
}

function generateSchemasFile(document: OpenApiDocument): string {
  const schemas = document.components.schemas ?? {}
  const lines = [banner('codegen/openapi.ts', 'openapi.yaml'), "import { Type, type Static } from '@sinclair/typebox'", '']
  for (const name of orderSchemas(schemas)) {
    lines.push(`export const ${name}Schema = ${new SchemaWriter(`components.schemas.${name}`).write(schemas[name]!)}`)
    lines.push(`export type ${name} = Static<typeof ${name}Schema>`, '')
  }
  return lines.join('\n')
}

function parametersObject(document: OpenApiDocument, where: string, parameters: Parameter[], location: Parameter['in']): string | undefined {
  const selected = parameters.filter((parameter) => parameter.in === location)
  if (selected.length === 0) return undefined
  const writer = new SchemaWriter(where)
  const lines = selected.map((parameter) => {
    const name = location === 'header' ? parameter.name.toLowerCase() : parameter.name
    const code = writer.write(parameter.schema, '  ')
    return `  ${key(name)}: ${parameter.required || location === 'path' ? code : `Type.Optional(${code})`},`
  })
  // Clients always send headers the contract does not name; unknown query parameters are errors.
  const additional = location === 'header' ? '' : ', { additionalProperties: false }'
  return `Type.Object({\n${lines.join('\n')}\n}${additional})`
}

function contentObject(where: string, content: Record<string, MediaType>, indent: string): string {
  const entries = Object.entries(content).map(([mediaType, media]) => {
    if (!media.schema) throw new Error(`${where}: ${mediaType} has no schema`)
    return `${indent}  ${literal(mediaType)}: { schema: ${new SchemaWriter(where).write(media.schema, `${indent}  `)} },`
  })
  return `{\n${entries.join('\n')}\n${indent}}`
}

function generateOperationsFile(document: OpenApiDocument): string {
  const prefix = new URL(document.servers?.[0]?.url ?? 'http://localhost/').pathname.replace(/\/$/, '')
  const lines = [
    banner('codegen/openapi.ts', 'openapi.yaml'),
    "import { Type, type Static } from '@sinclair/typebox'",
    `import * as schemas from './schemas.ts'`,
    '',
    '// Component schemas, under the names the operations below use.',
    'const {',
    ...Object.keys(document.components.schemas ?? {}).map((name) => `  ${name}Schema,`),
    '} = schemas',
    '',
  ]
  const entries: string[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method]
      if (!operation) continue
      const id = operation.operationId
      if (!id) throw new Error(`${method.toUpperCase()} ${path} has no operationId`)
      const where = `${id}`
      const name = pascal(id)
      const parameters = (operation.parameters ?? []).map((parameter) => resolve<Parameter>(document, parameter))
      const security = operation.security ?? document.security ?? []
      const authenticated = security.length > 0
      const scopes = operation['x-required-scopes'] ?? []
      const parts: string[] = []
      const types: string[] = []
      for (const [location, part, suffix] of [['path', 'params', 'Params'], ['query', 'querystring', 'Query'], ['header', 'headers', 'Headers']] as const) {
        const code = parametersObject(document, where, parameters, location)
        if (!code) continue
        lines.push(`export const ${name}${suffix}Schema = ${code}`)
        types.push(`export type ${name}${suffix} = Static<typeof ${name}${suffix}Schema>`)
        parts.push(`    ${part}: ${name}${suffix}Schema,`)
      }
      const requestBody = operation.requestBody ? resolve<RequestBody>(document, operation.requestBody) : undefined
      const mediaTypes = requestBody ? Object.keys(requestBody.content) : []
      if (requestBody) {
        const jsonSchema = requestBody.content['application/json']?.schema
        if (!jsonSchema) throw new Error(`${where}: a request body must offer application/json`)
        lines.push(`export const ${name}BodySchema = ${new SchemaWriter(where).write(jsonSchema)}`)
        types.push(`export type ${name}Body = Static<typeof ${name}BodySchema>`)
        if (mediaTypes.length === 1) parts.push(`    body: ${name}BodySchema,`)
        else parts.push(`    body: { content: { ${mediaTypes.map((type) => `${literal(type)}: { schema: ${name}BodySchema }`).join(', ')} } },`)
      }
      const responseLines: string[] = []
      const statuses = Object.keys(operation.responses)
      for (const status of statuses) {
        const response = resolve<Response>(document, operation.responses[status]!)
        if (!response.content) continue
        responseLines.push(`      ${literal(status)}: { content: ${contentObject(`${where} ${status}`, response.content, '        ')} },`)
        const json = response.content['application/json']?.schema
        if (json && /^2\d\d$/.test(status)) {
          lines.push(`export const ${name}Response${status}Schema = ${new SchemaWriter(where).write(json)}`)
          types.push(`export type ${name}Response${status} = Static<typeof ${name}Response${status}Schema>`)
        }
      }
      parts.push(`    response: {\n${responseLines.join('\n')}\n    },`)
      lines.push(...types, '')
      const success = statuses.filter((status) => /^2\d\d$/.test(status)).sort()[0]
      entries.push(
        [
          `  ${id}: {`,
          `    operationId: ${literal(id)},`,
          `    method: ${literal(method.toUpperCase())},`,
          `    path: ${literal(path)},`,
          `    url: ${literal(prefix + path.replace(/\{(\w+)\}/g, ':$1'))},`,
          `    tags: ${literal(operation.tags ?? [])},`,
          `    authenticated: ${authenticated},`,
          `    scopes: ${literal(scopes)},`,
          `    requestBodyRequired: ${requestBody?.required === true},`,
          `    requestMediaTypes: ${literal(mediaTypes)},`,
          `    successStatus: ${success ?? 'undefined'},`,
          `    schema: {`,
          ...parts.map((part) => `  ${part}`),
          `    },`,
          `  },`,
        ].join('\n'),
      )
    }
  }
  lines.push(
    '/** Every operation of the contract, by operationId, in document order. */',
    `export const operations = {\n${entries.join('\n')}\n} as const`,
    '',
    'export type OperationId = keyof typeof operations',
    '',
  )
  return lines.join('\n')
}

/** Reads `<root>/openapi.yaml` (or `documentPath`) and returns the generated files. */
export async function generateOpenApiFiles(root: string, documentPath = join(root, 'openapi.yaml')): Promise<GeneratedFile[]> {
  const document = parse(await readFile(documentPath, 'utf8')) as OpenApiDocument
  return [
    { path: 'src/generated/openapi/schemas.ts', contents: generateSchemasFile(document) },
    { path: 'src/generated/openapi/operations.ts', contents: generateOperationsFile(document) },
  ]
}
