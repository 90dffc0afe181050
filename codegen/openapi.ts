/**
 * openapi.yaml → src/generated/openapi/:
 *
 * - schemas.ts: a TypeBox constant `XSchema` and a static type `X` for every components.schemas entry;
 * - operations.ts: for every operation (in document order) its method, contract path, Fastify URL,
 *   tags, security and its Fastify route schema (params, querystring, headers, body, response), plus
 *   static types for each part.
 *
 * Routes validate requests and serialize responses with exactly these schemas, so the contract is
 * enforced in both directions. $refs to components.parameters/responses/requestBodies/headers are
 * resolved here; $refs to components.schemas become references to the schemas.ts constants.
 * Anything the generator does not understand fails the generation with its location in the
 * document (see OpenApiCodegenError) instead of being dropped.
 */
import { readFile, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { parse } from 'yaml'
import { banner, type GeneratedFile } from './generated-file.ts'
import {
  OpenApiCodegenError,
  SchemaWriter,
  componentConstant,
  isIdentifier,
  propertyKey,
  tsString,
  writeComponentSchemas,
  type SchemaScope,
} from './openapi-schema.ts'

export { OpenApiCodegenError } from './openapi-schema.ts'

/** Where the generated files go, relative to the repository root. */
export const OPENAPI_OUTPUT = {
  schemas: 'src/generated/openapi/schemas.ts',
  operations: 'src/generated/openapi/operations.ts',
} as const

const GENERATOR = 'codegen/openapi.ts'
const SOURCE = 'openapi.yaml'
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const OPERATION_KEYS = new Set([
  'tags',
  'summary',
  'description',
  'externalDocs',
  'operationId',
  'parameters',
  'requestBody',
  'responses',
  'deprecated',
  'security',
])
const PARAMETER_KEYS = new Set(['name', 'in', 'description', 'required', 'deprecated', 'schema', 'example', 'examples', 'style', 'explode'])
const DEFAULT_STYLE: Record<string, string> = { path: 'simple', query: 'form', header: 'simple' }
/** OpenAPI: header parameters with these names are ignored (they are described elsewhere). */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization'])

type Json = Record<string, unknown>

interface Parameter {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  schema: unknown
  where: string
}

interface Part {
  /** The key in the Fastify route schema. */
  key: 'params' | 'querystring' | 'headers'
  suffix: 'Params' | 'Query' | 'Headers'
  location: Parameter['in']
  additionalProperties: boolean
}

const PARTS: Part[] = [
  { key: 'params', suffix: 'Params', location: 'path', additionalProperties: false },
  // Unknown query parameters are errors; clients always send headers the contract does not name.
  { key: 'querystring', suffix: 'Query', location: 'query', additionalProperties: false },
  { key: 'headers', suffix: 'Headers', location: 'header', additionalProperties: true },
]

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1)
}

/** `application/merge-patch+json` → `MergePatchJson` (for constant names). */
function mediaTypeName(mediaType: string): string {
  const subtype = mediaType.split(';')[0]!.split('/')[1] ?? mediaType
  return subtype
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(pascal)
    .join('')
}

function isJsonMediaType(mediaType: string): boolean {
  return /^application\/(?:[\w.-]+\+)?json$/i.test(mediaType.split(';')[0]!.trim())
}

/** Index the generated code by a status key: '200', '4xx', 'default'. */
function statusKey(status: string, where: string): string {
  if (/^[1-5]\d\d$/.test(status) || status === 'default') return status
  if (/^[1-5]xx$/i.test(status)) return status.toLowerCase()
  throw new OpenApiCodegenError(where, `"${status}" is not a response status (100-599, 1XX-5XX or default)`)
}

// ---------------------------------------------------------------------------------------------
// The document

class Document {
  readonly components: Json
  readonly componentSchemaNames: ReadonlySet<string>

  constructor(readonly root: Json) {
    if (typeof root.openapi !== 'string' || !/^3\.1\.\d+$/.test(root.openapi)) {
      throw new OpenApiCodegenError('openapi', `this generator reads OpenAPI 3.1.x documents, got ${JSON.stringify(root.openapi)}`)
    }
    if (!isObject(root.paths)) throw new OpenApiCodegenError('paths', 'the document has no paths object')
    this.components = isObject(root.components) ? root.components : {}
    const schemas = this.components.schemas
    if (schemas !== undefined && !isObject(schemas)) throw new OpenApiCodegenError('components.schemas', 'must be an object')
    this.componentSchemaNames = new Set(Object.keys(schemas ?? {}))
  }

  /** The path the operations' URLs start with: the path of servers[0].url, without a trailing slash. */
  prefix(): string {
    const servers = this.root.servers
    if (servers === undefined) return ''
    const first = Array.isArray(servers) ? servers[0] : undefined
    if (!isObject(first) || typeof first.url !== 'string') throw new OpenApiCodegenError('servers[0]', 'a server needs a url')
    if (/[{}]/.test(first.url)) throw new OpenApiCodegenError('servers[0].url', 'server variables are not supported')
    let pathname: string
    try {
      pathname = new URL(first.url, 'http://localhost').pathname
    } catch {
      throw new OpenApiCodegenError('servers[0].url', `${first.url} is not a URL`)
    }
    return decodeURI(pathname).replace(/\/+$/, '')
  }

  /** Follows a local `#/…` JSON pointer. */
  pointer(ref: string, where: string): unknown {
    if (!ref.startsWith('#/')) throw new OpenApiCodegenError(where, `only local $refs (#/…) are supported, got ${ref}`)
    let target: unknown = this.root
    for (const raw of ref.slice(2).split('/')) {
      const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
      if (!isObject(target) && !Array.isArray(target)) throw new OpenApiCodegenError(where, `$ref ${ref} does not resolve`)
      target = (target as Record<string, unknown>)[token]
      if (target === undefined) throw new OpenApiCodegenError(where, `$ref ${ref} does not resolve`)
    }
    return target
  }

  /** A parameter, request body, response or header object, with its $ref (chain) followed. */
  resolve(value: unknown, where: string): { value: Json; where: string } {
    let current = value
    let location = where
    const seen = new Set<string>()
    while (isObject(current) && typeof current.$ref === 'string') {
      const ref = current.$ref
      if (seen.has(ref)) throw new OpenApiCodegenError(where, `$ref ${ref} refers to itself`)
      seen.add(ref)
      current = this.pointer(ref, location)
      location = ref.slice(2).replace(/\//g, '.')
    }
    if (!isObject(current)) throw new OpenApiCodegenError(location, 'must be an object')
    return { value: current, where: location }
  }
}

// ---------------------------------------------------------------------------------------------
// schemas.ts

function generateSchemasFile(document: Document): string {
  const schemas = (document.components.schemas ?? {}) as Json
  const components = writeComponentSchemas(schemas)
  const lines = [banner(GENERATOR, SOURCE)]
  if (components.length > 0) lines.push("import { Type, type Static } from '@sinclair/typebox'", '')
  for (const component of components) {
    lines.push(`export const ${componentConstant(component.name)} = ${component.code}`)
    lines.push(`export type ${component.name} = Static<typeof ${componentConstant(component.name)}>`, '')
  }
  if (components.length === 0) lines.push('export {}', '')
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------
// operations.ts

interface OperationCode {
  id: string
  /** Constants and types declared before the operations object. */
  declarations: string[]
  /** This operation's entry in the operations object. */
  entry: string
}

/** Security of one operation: whether it needs a bearer token, and which scopes (roles) that token needs. */
function operationSecurity(document: Document, operation: Json, where: string): { authenticated: boolean; scopes: string[] } {
  const requirements = operation.security ?? document.root.security ?? []
  const securityWhere = operation.security === undefined ? 'security' : `${where}.security`
  if (!Array.isArray(requirements) || !requirements.every(isObject)) {
    throw new OpenApiCodegenError(securityWhere, 'must be an array of security requirement objects')
  }
  const schemes = isObject(document.components.securitySchemes) ? document.components.securitySchemes : {}
  // An empty requirement object makes authentication optional; no requirements make it absent.
  const authenticated = requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0)
  const nonEmpty = requirements.filter((requirement) => Object.keys(requirement).length > 0)
  if (nonEmpty.length > 1) throw new OpenApiCodegenError(securityWhere, 'alternative security requirements are not supported')
  let scopes: string[] = []
  for (const [name, list] of Object.entries(nonEmpty[0] ?? {})) {
    const scheme = schemes[name]
    if (!isObject(scheme)) throw new OpenApiCodegenError(securityWhere, `unknown security scheme "${name}"`)
    if (scheme.type !== 'http' || typeof scheme.scheme !== 'string' || scheme.scheme.toLowerCase() !== 'bearer') {
      throw new OpenApiCodegenError(`components.securitySchemes.${name}`, 'only HTTP bearer security schemes are supported')
    }
    if (Object.keys(nonEmpty[0]!).length > 1)
      throw new OpenApiCodegenError(securityWhere, 'a requirement naming several schemes is not supported')
    if (!Array.isArray(list) || !list.every((scope) => typeof scope === 'string')) {
      throw new OpenApiCodegenError(securityWhere, `the scopes of "${name}" must be an array of strings`)
    }
    scopes = list as string[]
  }
  // openapi.yaml may name the scopes in an extension instead of the requirement's role list.
  const extension = operation['x-required-scopes']
  if (extension !== undefined) {
    if (!Array.isArray(extension) || !extension.every((scope) => typeof scope === 'string')) {
      throw new OpenApiCodegenError(`${where}.x-required-scopes`, 'must be an array of strings')
    }
    if (scopes.length === 0) scopes = extension as string[]
    else if (extension.length > 0 && [...new Set(extension)].sort().join(' ') !== [...new Set(scopes)].sort().join(' ')) {
      throw new OpenApiCodegenError(
        where,
        `x-required-scopes (${extension.join(', ')}) disagrees with the security requirement's scopes (${scopes.join(', ')})`,
      )
    }
  }
  if (new Set(scopes).size !== scopes.length) throw new OpenApiCodegenError(where, 'a scope is listed twice')
  if (!authenticated && scopes.length > 0) throw new OpenApiCodegenError(where, 'scopes are listed but the operation needs no credential')
  return { authenticated, scopes }
}

function collectParameters(document: Document, pathItem: Json, operation: Json, path: string, where: string): Parameter[] {
  const byKey = new Map<string, Parameter>()
  const lists: Array<[unknown, string]> = [
    [pathItem.parameters, `paths.${path}.parameters`],
    [operation.parameters, `${where}.parameters`],
  ]
  for (const [list, listWhere] of lists) {
    if (list === undefined) continue
    if (!Array.isArray(list)) throw new OpenApiCodegenError(listWhere, 'must be an array')
    const seenHere = new Set<string>()
    list.forEach((item, index) => {
      const { value, where: at } = document.resolve(item, `${listWhere}[${index}]`)
      for (const keyword of Object.keys(value)) {
        if (keyword === 'content') throw new OpenApiCodegenError(at, 'parameters described by "content" are not supported; use "schema"')
        if (!PARAMETER_KEYS.has(keyword) && !keyword.startsWith('x-'))
          throw new OpenApiCodegenError(at, `unsupported parameter field "${keyword}"`)
      }
      if (typeof value.name !== 'string' || value.name === '') throw new OpenApiCodegenError(at, 'a parameter needs a name')
      const location = value.in
      if (location === 'cookie') throw new OpenApiCodegenError(at, 'cookie parameters are not supported')
      if (location !== 'path' && location !== 'query' && location !== 'header')
        throw new OpenApiCodegenError(at, `unknown parameter location ${JSON.stringify(location)}`)
      if (value.style !== undefined && value.style !== DEFAULT_STYLE[location]) {
        throw new OpenApiCodegenError(at, `style ${JSON.stringify(value.style)} is not supported for ${location} parameters`)
      }
      if (value.explode !== undefined && value.explode !== (location === 'query'))
        throw new OpenApiCodegenError(at, `explode ${String(value.explode)} is not supported for ${location} parameters`)
      if (value.schema === undefined) throw new OpenApiCodegenError(at, 'a parameter needs a schema')
      if (location === 'path' && value.required !== true) throw new OpenApiCodegenError(at, 'a path parameter must be required: true')
      if (value.required !== undefined && typeof value.required !== 'boolean')
        throw new OpenApiCodegenError(at, '"required" must be a boolean')
      // Header names are case-insensitive; Node.js hands them to Fastify in lower case.
      const name = location === 'header' ? value.name.toLowerCase() : value.name
      if (location === 'header' && IGNORED_HEADERS.has(name)) return
      const key = `${location}:${name}`
      if (seenHere.has(key)) throw new OpenApiCodegenError(at, `${location} parameter "${name}" is listed twice`)
      seenHere.add(key)
      // Operation-level parameters override path-level ones with the same name and location.
      byKey.set(key, { name, in: location, required: value.required === true, schema: value.schema, where: `${at}.schema` })
    })
  }
  const parameters = [...byKey.values()]
  const templated = [...path.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1]!)
  for (const name of templated) {
    if (!/^[A-Za-z_][\w]*$/.test(name))
      throw new OpenApiCodegenError(`paths.${path}`, `path parameter {${name}} cannot be a Fastify route parameter`)
    if (!parameters.some((parameter) => parameter.in === 'path' && parameter.name === name)) {
      throw new OpenApiCodegenError(where, `path parameter {${name}} is not described in parameters`)
    }
  }
  for (const parameter of parameters) {
    if (parameter.in === 'path' && !templated.includes(parameter.name)) {
      throw new OpenApiCodegenError(where, `path parameter "${parameter.name}" does not appear in ${path}`)
    }
  }
  return parameters
}

/** `/orders/{id}` under prefix `/api/v1` → `/api/v1/orders/:id` (a literal colon is escaped as Fastify wants). */
function fastifyUrl(prefix: string, path: string): string {
  return prefix + path.replace(/:/g, '::').replace(/\{([^{}]+)\}/g, ':$1')
}

class OperationsWriter {
  private readonly scope: SchemaScope
  private readonly writer: SchemaWriter
  private readonly exported = new Set<string>()

  constructor(private readonly document: Document) {
    this.scope = { componentNames: document.componentSchemaNames, used: new Set() }
    this.writer = new SchemaWriter(this.scope)
  }

  /** The component schemas the file refers to. */
  get usedComponents(): string[] {
    return [...this.scope.used]
  }

  private declare(name: string, where: string): string {
    if (this.exported.has(name)) throw new OpenApiCodegenError(where, `two declarations would both be named ${name}`)
    // Component constants are imported under their own names.
    if (name.endsWith('Schema') && this.document.componentSchemaNames.has(name.slice(0, -'Schema'.length))) {
      throw new OpenApiCodegenError(
        where,
        `the generated name ${name} collides with the constant for components.schemas.${name.slice(0, -'Schema'.length)}`,
      )
    }
    this.exported.add(name)
    return name
  }

  /** A schema as code; a bare $ref to a component stays a reference to its constant. */
  private schema(schema: unknown, where: string, indent = ''): string {
    return this.writer.write(schema, where, indent)
  }

  private isComponentRef(schema: unknown): boolean {
    return isObject(schema) && typeof schema.$ref === 'string'
  }

  operation(path: string, method: string, pathItem: Json, operation: Json, prefix: string): OperationCode {
    const where = `paths.${path}.${method}`
    for (const keyword of Object.keys(operation)) {
      if (!OPERATION_KEYS.has(keyword) && !keyword.startsWith('x-'))
        throw new OpenApiCodegenError(where, `unsupported operation field "${keyword}"`)
    }
    const id = operation.operationId
    if (typeof id !== 'string' || !isIdentifier(id))
      throw new OpenApiCodegenError(where, 'every operation needs an operationId that is a valid identifier')
    const name = pascal(id)
    const tags = operation.tags ?? []
    if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string'))
      throw new OpenApiCodegenError(`${where}.tags`, 'must be an array of strings')
    const { authenticated, scopes } = operationSecurity(this.document, operation, where)
    const parameters = collectParameters(this.document, pathItem, operation, path, where)

    const constants: string[] = []
    const types: string[] = []
    const schemaParts: string[] = []

    for (const part of PARTS) {
      const selected = parameters.filter((parameter) => parameter.in === part.location)
      if (selected.length === 0) continue
      const lines = selected.map((parameter) => {
        const code = this.schema(parameter.schema, parameter.where, '  ')
        return `  ${propertyKey(parameter.name)}: ${parameter.required ? code : `Type.Optional(${code})`},`
      })
      const constant = this.declare(`${name}${part.suffix}Schema`, where)
      constants.push(
        `export const ${constant} = Type.Object({\n${lines.join('\n')}\n}, { additionalProperties: ${part.additionalProperties} })`,
      )
      types.push(`export type ${this.declare(`${name}${part.suffix}`, where)} = Static<typeof ${constant}>`)
      schemaParts.push(`${part.key}: ${constant},`)
    }

    // Request body
    let requestBodyRequired = false
    let mediaTypes: string[] = []
    if (operation.requestBody !== undefined) {
      const { value: body, where: bodyWhere } = this.document.resolve(operation.requestBody, `${where}.requestBody`)
      if (body.required !== undefined && typeof body.required !== 'boolean')
        throw new OpenApiCodegenError(bodyWhere, '"required" must be a boolean')
      requestBodyRequired = body.required === true
      if (!isObject(body.content) || Object.keys(body.content).length === 0)
        throw new OpenApiCodegenError(bodyWhere, 'a request body needs content')
      mediaTypes = Object.keys(body.content)
      // Media types with the same schema share one constant, named after the first of them.
      const groups: Array<{ schema: unknown; key: string; mediaTypes: string[] }> = []
      for (const mediaType of mediaTypes) {
        const media = body.content[mediaType]
        if (!isObject(media) || media.schema === undefined)
          throw new OpenApiCodegenError(`${bodyWhere}.content.${mediaType}`, 'a request media type needs a schema')
        if (media.encoding !== undefined) throw new OpenApiCodegenError(`${bodyWhere}.content.${mediaType}`, '"encoding" is not supported')
        const key = JSON.stringify(media.schema)
        const group = groups.find((candidate) => candidate.key === key)
        if (group) group.mediaTypes.push(mediaType)
        else groups.push({ schema: media.schema, key, mediaTypes: [mediaType] })
      }
      const constantFor = new Map<string, string>()
      for (const group of groups) {
        const suffix = groups.length === 1 ? '' : mediaTypeName(group.mediaTypes[0]!)
        const constant = this.declare(`${name}Body${suffix}Schema`, where)
        constants.push(`export const ${constant} = ${this.schema(group.schema, `${bodyWhere}.content.${group.mediaTypes[0]}.schema`)}`)
        for (const mediaType of group.mediaTypes) constantFor.set(mediaType, constant)
      }
      types.push(
        `export type ${this.declare(`${name}Body`, where)} = ${[...new Set(constantFor.values())].map((constant) => `Static<typeof ${constant}>`).join(' | ')}`,
      )
      if (mediaTypes.length === 1 && mediaTypes[0] === 'application/json') {
        schemaParts.push(`body: ${constantFor.get('application/json')},`)
      } else {
        const lines = mediaTypes.map((mediaType) => `    ${tsString(mediaType)}: { schema: ${constantFor.get(mediaType)} },`)
        schemaParts.push(`body: {\n  content: {\n${lines.join('\n')}\n  },\n},`)
      }
    }

    // Responses
    if (!isObject(operation.responses) || Object.keys(operation.responses).length === 0)
      throw new OpenApiCodegenError(where, 'an operation needs responses')
    const responseLines: string[] = []
    const successStatuses: number[] = []
    for (const [status, raw] of Object.entries(operation.responses)) {
      const key = statusKey(status, `${where}.responses`)
      const { value: response, where: responseWhere } = this.document.resolve(raw, `${where}.responses.${status}`)
      if (/^2\d\d$/.test(key)) successStatuses.push(Number(key))
      this.checkResponseHeaders(response, responseWhere)
      if (response.content === undefined) continue
      if (!isObject(response.content)) throw new OpenApiCodegenError(responseWhere, '"content" must be an object')
      const content: string[] = []
      let jsonType: string | undefined
      const responseMediaTypes = Object.keys(response.content)
      for (const mediaType of responseMediaTypes) {
        const media = response.content[mediaType]
        const mediaWhere = `${responseWhere}.content.${mediaType}`
        if (!isObject(media) || media.schema === undefined)
          throw new OpenApiCodegenError(mediaWhere, 'a response media type needs a schema')
        const json = isJsonMediaType(mediaType)
        // The static type of a JSON response: application/json's schema, else the first +json one's.
        const typed =
          json &&
          (mediaType === 'application/json' || !responseMediaTypes.some((other) => other === 'application/json')) &&
          jsonType === undefined
        let code: string
        const inline = !this.isComponentRef(media.schema)
        if (typed && (inline || /^2/.test(key))) {
          // A constant for every success body and for inline error bodies; the route schema below
          // names the component itself when there is one.
          const constant = this.declare(`${name}Response${pascal(key)}Schema`, where)
          const schemaCode = this.schema(media.schema, `${mediaWhere}.schema`)
          constants.push(`export const ${constant} = ${schemaCode}`)
          code = inline ? constant : schemaCode
          jsonType = constant
        } else {
          // Indented for the multi-line form below (response → status → content → media type), which
          // the whole schema part is then shifted from.
          code = this.schema(media.schema, `${mediaWhere}.schema`, '      ')
        }
        if (typed && jsonType === undefined) jsonType = code
        content.push(`${tsString(mediaType)}: { schema: ${code} }`)
      }
      if (jsonType !== undefined)
        types.push(`export type ${this.declare(`${name}Response${pascal(key)}`, where)} = Static<typeof ${jsonType}>`)
      if (content.length === 0) continue
      const single = content.length === 1 && !content[0]!.includes('\n')
      responseLines.push(
        single
          ? `  ${tsString(key)}: { content: { ${content[0]} } },`
          : `  ${tsString(key)}: {\n    content: {\n${content.map((line) => `      ${line},`).join('\n')}\n    },\n  },`,
      )
    }
    if (responseLines.length > 0) schemaParts.push(`response: {\n${responseLines.join('\n')}\n},`)
    const successStatus = successStatuses.length > 0 ? String(Math.min(...successStatuses)) : 'null'

    const entry = [
      `  ${id}: {`,
      `    operationId: ${tsString(id)},`,
      `    method: ${tsString(method.toUpperCase())},`,
      `    path: ${tsString(path)},`,
      `    url: ${tsString(fastifyUrl(prefix, path))},`,
      `    tags: [${tags.map((tag) => tsString(tag as string)).join(', ')}],`,
      `    authenticated: ${authenticated},`,
      `    scopes: [${scopes.map(tsString).join(', ')}],`,
      `    requestBodyRequired: ${requestBodyRequired},`,
      `    requestMediaTypes: [${mediaTypes.map(tsString).join(', ')}],`,
      `    successStatus: ${successStatus},`,
      `    schema: {`,
      ...schemaParts.map((part) => part.replace(/^/gm, '      ')),
      `    },`,
      `  },`,
    ].join('\n')
    return { id, declarations: [`// ${id}: ${method.toUpperCase()} ${path}`, ...constants, ...types, ''], entry }
  }

  /** Response headers are not part of the route schema, but their $refs and schemas must still be sound. */
  private checkResponseHeaders(response: Json, where: string): void {
    if (response.headers === undefined) return
    if (!isObject(response.headers)) throw new OpenApiCodegenError(`${where}.headers`, 'must be an object')
    for (const [header, raw] of Object.entries(response.headers)) {
      const { value, where: headerWhere } = this.document.resolve(raw, `${where}.headers.${header}`)
      if (value.schema !== undefined)
        new SchemaWriter({ componentNames: this.document.componentSchemaNames, used: new Set() }).write(
          value.schema,
          `${headerWhere}.schema`,
        )
    }
  }
}

function generateOperationsFile(document: Document): string {
  const prefix = document.prefix()
  const writer = new OperationsWriter(document)
  const declarations: string[] = []
  const entries: string[] = []
  const ids = new Set<unknown>()
  const urls = new Map<string, string>()
  for (const [path, pathItem] of Object.entries(document.root.paths as Json)) {
    const where = `paths.${path}`
    if (!path.startsWith('/')) throw new OpenApiCodegenError(where, 'a path must start with /')
    if (!isObject(pathItem)) throw new OpenApiCodegenError(where, 'must be a path item object')
    if (pathItem.$ref !== undefined) throw new OpenApiCodegenError(where, '$ref path items are not supported')
    if (pathItem.servers !== undefined) throw new OpenApiCodegenError(where, 'path-level servers are not supported')
    // Document order of the methods within a path item, too.
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!HTTP_METHODS.includes(method)) continue
      if (!isObject(operation)) throw new OpenApiCodegenError(`${where}.${method}`, 'must be an operation object')
      // Checked first: a second getWidget would otherwise fail on its constants' names.
      if (typeof operation.operationId === 'string' && ids.has(operation.operationId)) {
        throw new OpenApiCodegenError(`${where}.${method}`, `operationId ${operation.operationId} is used twice`)
      }
      const code = writer.operation(path, method, pathItem, operation, prefix)
      ids.add(code.id)
      // /a/{x} and /a/{y} are the same Fastify route.
      const route = `${method.toUpperCase()} ${fastifyUrl(prefix, path).replace(/:\w+/g, ':')}`
      if (urls.has(route)) throw new OpenApiCodegenError(`${where}.${method}`, `the same route as ${urls.get(route)}`)
      urls.set(route, code.id)
      declarations.push(...code.declarations)
      entries.push(code.entry)
    }
  }
  const body = [
    ...declarations,
    '/** Every operation of the contract, by operationId, in document order. */',
    entries.length > 0 ? `export const operations = {\n${entries.join('\n')}\n} as const` : 'export const operations = {} as const',
    '',
    'export type OperationId = keyof typeof operations',
    '',
  ].join('\n')
  const typebox = [/\bType\./.test(body) ? 'Type' : '', /\bStatic</.test(body) ? 'type Static' : ''].filter(Boolean)
  const used = writer.usedComponents.sort()
  const header = [banner(GENERATOR, SOURCE).trimEnd(), '']
  if (typebox.length > 0) header.push(`import { ${typebox.join(', ')} } from '@sinclair/typebox'`)
  if (used.length > 0) header.push(`import {\n${used.map((name) => `  ${componentConstant(name)},`).join('\n')}\n} from './schemas.ts'`)
  return `${header.join('\n')}\n\n${body}`
}

// ---------------------------------------------------------------------------------------------
// Public API

/** Parses an OpenAPI 3.1 document (YAML or JSON text). `sourceName` only labels errors. */
export function parseOpenApiDocument(source: string, sourceName = SOURCE): Json {
  let parsed: unknown
  try {
    parsed = parse(source, { prettyErrors: true, uniqueKeys: true })
  } catch (error) {
    throw new OpenApiCodegenError(sourceName, `not valid YAML: ${(error as Error).message}`)
  }
  if (!isObject(parsed)) throw new OpenApiCodegenError(sourceName, 'not an OpenAPI document (expected a mapping at the top level)')
  return parsed
}

/** The generated files for an already parsed document. Pure: the same document gives byte-identical files. */
export function generateOpenApiFilesFromDocument(root: Json): GeneratedFile[] {
  const document = new Document(root)
  return [
    { path: OPENAPI_OUTPUT.schemas, contents: generateSchemasFile(document) },
    { path: OPENAPI_OUTPUT.operations, contents: generateOperationsFile(document) },
  ]
}

/** The generated files for the text of an OpenAPI document. Errors name `sourceName`. */
export function generateOpenApiFilesFromSource(source: string, sourceName = SOURCE): GeneratedFile[] {
  const root = parseOpenApiDocument(source, sourceName)
  try {
    return generateOpenApiFilesFromDocument(root)
  } catch (error) {
    if (error instanceof OpenApiCodegenError) error.message = `${sourceName}: ${error.message}`
    throw error
  }
}

/**
 * Reads `<root>/openapi.yaml` and returns the files to write under `<root>` (paths are relative
 * to the root: see OPENAPI_OUTPUT). `rootOrDocument` may also be the path of the document itself,
 * and `documentPath` overrides where the document is read from.
 */
export async function generateOpenApiFiles(rootOrDocument: string, documentPath?: string): Promise<GeneratedFile[]> {
  let path = documentPath
  if (path === undefined) {
    const isFile =
      /\.(ya?ml|json)$/i.test(rootOrDocument) &&
      (await stat(rootOrDocument).then(
        (stats) => stats.isFile(),
        () => false,
      ))
    path = isFile ? rootOrDocument : join(rootOrDocument, SOURCE)
  }
  const source = await readFile(path, 'utf8')
  return generateOpenApiFilesFromSource(source, basename(path) === SOURCE ? SOURCE : path)
}
