/**
 * openapi.yaml → src/generated/openapi/, the part of the REST contract that is ours to derive:
 *
 * - schemas.ts: every components.schemas entry as the contract's own JSON Schema (`XSchema`), each
 *   declared after the schemas it refers to, a `$ref` becoming a reference to that constant;
 * - operations.ts: the operations manifest, for every operation in document order its method,
 *   contract path, Fastify URL, request media types, whether a body is required, authentication,
 *   scopes, the query parameters that have defaults, and its Fastify route schema (params,
 *   querystring, headers, body, response) built from the same JSON Schema.
 *
 * Fastify validates with these schemas (Ajv, strict, JSON Schema 2020-12) and serializes with them
 * (fast-json-stringify); the static types come from openapi-typescript (codegen/openapi-client.ts).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parse } from 'yaml'
import { banner, type GeneratedFile } from './generated-file.ts'

export type Json = Record<string, unknown>

const GENERATOR = 'codegen/openapi.ts'
const SOURCE = 'openapi.yaml'
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'])
const SCHEMA_REF = /^#\/components\/schemas\/([A-Za-z_$][\w$]*)$/
/** Described elsewhere in OpenAPI (media types, security): never validated as header parameters. */
export const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization'])
/** Parameter locations and the route schema part each fills; clients always send unnamed headers. */
const PARTS = [
  { location: 'path', key: 'params', additionalProperties: false },
  { location: 'query', key: 'querystring', additionalProperties: false },
  { location: 'header', key: 'headers', additionalProperties: true },
] as const

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A contract the manifest cannot describe: generation stops, naming the place in the document. */
export function fail(where: string, problem: string): never {
  throw new Error(`${SOURCE}: ${where}: ${problem}`)
}

/** Follows a local `#/…` $ref (chain) to the object it names. */
export function resolve(document: Json, value: unknown, where: string): Json {
  let current = value
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    if (hops > 10 || !current.$ref.startsWith('#/')) fail(where, `cannot follow $ref ${current.$ref}`)
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, token) => (isObject(node) ? node[token.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), document)
  }
  if (!isObject(current)) fail(where, 'does not resolve to an object')
  return current
}

/** The component schemas a schema refers to. */
function schemaRefs(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) schemaRefs(item, found)
  else if (isObject(schema)) {
    const match = typeof schema.$ref === 'string' ? SCHEMA_REF.exec(schema.$ref) : null
    if (typeof schema.$ref === 'string' && !match) fail(schema.$ref, 'only #/components/schemas/<Name> refs may appear inside a schema')
    if (match) found.add(match[1]!)
    for (const value of Object.values(schema)) schemaRefs(value, found)
  }
  return found
}

/** A value as TypeScript source: JSON, except that a component $ref is the component's constant. */
function source(value: unknown, indent = ''): string {
  return JSON.stringify(value, (_key, node) => (isObject(node) && typeof node.$ref === 'string' ? `\u0000${node.$ref}` : node), 2)
    .replace(/"\\u0000#\/components\/schemas\/([\w$]+)"/g, '$1Schema')
    .replace(/\n/g, `\n${indent}`)
}

/** Component schemas, each after those it refers to (a cycle could not be declared as constants). */
function schemasFile(schemas: Json): string {
  const ordered: string[] = []
  const visiting = new Set<string>()
  const visit = (name: string): void => {
    if (ordered.includes(name)) return
    if (!(name in schemas)) fail(`components.schemas`, `$ref to unknown schema ${name}`)
    if (visiting.has(name)) fail(`components.schemas.${name}`, 'schemas refer to each other in a cycle')
    visiting.add(name)
    for (const dependency of schemaRefs(schemas[name])) visit(dependency)
    ordered.push(name)
  }
  for (const name of Object.keys(schemas)) visit(name)
  const constants = ordered.map((name) => `export const ${name}Schema = ${source(schemas[name])}\n`)
  return `${banner(GENERATOR, SOURCE)}\n${constants.join('\n')}`
}

/** Whether a bearer token is required, and the scopes it needs (`x-required-scopes`, else the requirement's list). */
export function security(
  document: Json,
  operation: Json,
  where: string,
): { authenticated: boolean; queryCredential: string | null; scopes: unknown[] } {
  const requirements = operation.security ?? document.security ?? []
  if (!Array.isArray(requirements) || !requirements.every(isObject)) fail(`${where}.security`, 'must be a list of requirements')
  // An empty requirement makes the credential optional; no requirement at all makes it absent.
  const authenticated = requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0)
  const listed = requirements.flatMap((requirement) => Object.values(requirement).flat())
  const scopes = operation['x-required-scopes'] ?? listed
  if (!Array.isArray(scopes)) fail(`${where}.x-required-scopes`, 'must be a list')
  // An alternative credential in the query string (an `apiKey` scheme `in: query`: the stream
  // ticket): its parameter's name, so that the router lets a request carrying it reach the handler.
  const schemes = isObject(document.components) && isObject(document.components.securitySchemes) ? document.components.securitySchemes : {}
  const inQuery = requirements
    .flatMap((requirement) => Object.keys(requirement))
    .map((name) => schemes[name])
    .find((scheme) => isObject(scheme) && scheme.type === 'apiKey' && scheme.in === 'query')
  const queryCredential = isObject(inQuery) && typeof inQuery.name === 'string' ? inQuery.name : null
  return { authenticated, queryCredential, scopes }
}

function operationEntry(document: Json, path: string, method: string, pathItem: Json, operation: Json, prefix: string): Json {
  const where = `paths.${path}.${method}`
  const parameters = [...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []), ...((operation.parameters as unknown[]) ?? [])]
    .map((parameter, index) => resolve(document, parameter, `${where}.parameters[${index}]`))
    .map((parameter): Json & { name: string } => ({
      ...parameter,
      name: parameter.in === 'header' ? String(parameter.name).toLowerCase() : String(parameter.name),
    }))
    .filter((parameter) => !(parameter.in === 'header' && IGNORED_HEADERS.has(parameter.name)))
  const schema: Json = {}
  for (const part of PARTS) {
    const selected = parameters.filter((parameter) => parameter.in === part.location)
    if (selected.length === 0) continue
    const required = selected.filter((parameter) => parameter.required === true).map((parameter) => parameter.name)
    schema[part.key] = {
      type: 'object',
      properties: Object.fromEntries(selected.map((parameter) => [parameter.name, parameter.schema])),
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: part.additionalProperties,
    }
  }
  const queryDefaults = parameters
    .filter((parameter) => parameter.in === 'query' && 'default' in resolve(document, parameter.schema, `${where}.${parameter.name}`))
    .map((parameter) => parameter.name)

  const body = operation.requestBody === undefined ? undefined : resolve(document, operation.requestBody, `${where}.requestBody`)
  const content = isObject(body?.content) ? body.content : {}
  const requestMediaTypes = Object.keys(content)
  const bodySchemas = Object.values(content).map((media) => resolve(document, media, `${where}.requestBody`).schema)
  // One schema for every media type is the plain `body` form; Fastify's per-media-type form otherwise.
  if (new Set(bodySchemas.map((body) => JSON.stringify(body))).size === 1) schema.body = bodySchemas[0]
  else if (requestMediaTypes.length > 0) schema.body = { content }

  const responses: Json = {}
  for (const [status, response] of Object.entries(resolve(document, operation.responses, `${where}.responses`))) {
    const responseContent = resolve(document, response, `${where}.responses.${status}`).content
    if (isObject(responseContent))
      responses[status.toLowerCase()] = {
        content: Object.fromEntries(
          Object.entries(responseContent).map(([type, media]) => [type, { schema: resolve(document, media, where).schema }]),
        ),
      }
  }
  if (Object.keys(responses).length > 0) schema.response = responses

  return {
    operationId: operation.operationId,
    method: method.toUpperCase(),
    path,
    // `/orders/{id}` under `/api/v1` → `/api/v1/orders/:id` (a literal colon escaped as Fastify wants).
    url: prefix + path.replace(/:/g, '::').replace(/\{([^{}]+)\}/g, ':$1'),
    ...security(document, operation, where),
    requestBodyRequired: body?.required === true,
    requestMediaTypes,
    queryDefaults,
    schema,
  }
}

/** Every operation of the document with its path, method and path item, by operationId, in document order. */
export function eachOperation(document: Json): Array<{ id: string; path: string; method: string; pathItem: Json; operation: Json }> {
  const found: Array<{ id: string; path: string; method: string; pathItem: Json; operation: Json }> = []
  for (const [path, pathItem] of Object.entries(resolve(document, document.paths, 'paths'))) {
    if (!isObject(pathItem)) fail(`paths.${path}`, 'must be a path item')
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!HTTP_METHODS.has(method) || !isObject(operation)) continue
      const id = operation.operationId
      if (typeof id !== 'string' || found.some((other) => other.id === id))
        fail(`paths.${path}.${method}`, 'needs an operationId of its own')
      found.push({ id, path, method, pathItem, operation })
    }
  }
  return found
}

/** The scopes each operation requires, by operationId (what the manifest's `scopes` says). */
export function restRequiredScopes(document: Json): Map<string, unknown[]> {
  return new Map(
    eachOperation(document).map(({ id, path, method, operation }) => [id, security(document, operation, `paths.${path}.${method}`).scopes]),
  )
}

function operationsFile(document: Json): string {
  const server = Array.isArray(document.servers) && isObject(document.servers[0]) ? String(document.servers[0].url) : '/'
  const prefix = new URL(server, 'http://localhost').pathname.replace(/\/+$/, '')
  const entries: Json = {}
  for (const { id, path, method, pathItem, operation } of eachOperation(document)) {
    entries[id] = operationEntry(document, path, method, pathItem, operation, prefix)
  }
  const used = [...schemaRefs(entries)].sort()
  return [
    banner(GENERATOR, SOURCE),
    used.length > 0 ? `import {\n${used.map((name) => `  ${name}Schema,\n`).join('')}} from './schemas.ts'\n` : '',
    '/** Every operation of the contract, by operationId, in document order. */',
    `export const operations = ${source(entries)} as const\n`,
    'export type OperationId = keyof typeof operations\n',
    '/** The operationIds, in document order. */',
    `export const operationIds: readonly OperationId[] = ${JSON.stringify(Object.keys(entries))}\n`,
  ].join('\n')
}

/** The generated files for a parsed document. Pure: the same document gives byte-identical files. */
export function openApiFilesOf(document: Json): GeneratedFile[] {
  const schemas = resolve(document, document.components ?? {}, 'components').schemas ?? {}
  if (!isObject(schemas)) fail('components.schemas', 'must be an object')
  return [
    { path: 'src/generated/openapi/schemas.ts', contents: schemasFile(schemas) },
    { path: 'src/generated/openapi/operations.ts', contents: operationsFile(document) },
  ]
}

export async function generateOpenApiFiles(root: string): Promise<GeneratedFile[]> {
  return openApiFilesOf(parse(await readFile(join(root, SOURCE), 'utf8')) as Json)
}
