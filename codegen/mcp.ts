/**
 * openapi.yaml → src/generated/mcp/tools.ts: one Model Context Protocol tool per REST operation
 * (docs/agents.md, decisions §13, "Agents"). A tool is named by its operationId, described by the
 * operation's summary, description and scopes, and takes one flat object of arguments: each path,
 * query and header parameter under its contract name, and the request body as `body`. Every schema
 * is inlined (a tool's input schema must stand alone). Beside the schema, each tool records how its
 * arguments become the REST request (src/mcp/rest-dispatch.ts sends it).
 *
 * Left out: an operation whose only success answer is a Server-Sent Events stream (a tool call
 * must end); the event log is a resource instead (src/mcp/resources.ts).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parse } from 'yaml'
import { banner, type GeneratedFile } from './generated-file.ts'
import { IGNORED_HEADERS, eachOperation, fail, isObject, resolve, security, type Json } from './openapi.ts'

const GENERATOR = 'codegen/mcp.ts'
const SOURCE = 'openapi.yaml'
/** The argument that carries the request body. */
const BODY_ARGUMENT = 'body'
/** Keywords that only document a schema in OpenAPI; tools keep `description` and `examples`. */
const DROPPED_KEYWORDS = new Set(['example', 'xml', 'externalDocs', 'discriminator'])

/** A schema with every `$ref` replaced by what it names, so that it stands alone. */
function inline(document: Json, schema: unknown, where: string, depth = 0): unknown {
  if (depth > 32) fail(where, 'schema nests too deeply to inline')
  if (Array.isArray(schema)) return schema.map((item) => inline(document, item, where, depth + 1))
  if (!isObject(schema)) return schema
  if (typeof schema.$ref === 'string') {
    const { $ref: _ref, ...siblings } = schema
    return inline(document, { ...resolve(document, schema, where), ...siblings }, where, depth + 1)
  }
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => !DROPPED_KEYWORDS.has(key))
      .map(([key, value]) => [key, inline(document, value, where, depth + 1)]),
  )
}

/** Whether every success answer of the operation is an event stream. */
function streamsOnly(document: Json, operation: Json, where: string): boolean {
  const responses = resolve(document, operation.responses, `${where}.responses`)
  const successes = Object.entries(responses)
    .filter(([status]) => /^2/.test(status))
    .map(([status, response]) => resolve(document, response, `${where}.responses.${status}`).content)
  return (
    successes.length > 0 &&
    successes.every((content) => isObject(content) && Object.keys(content).every((type) => type === 'text/event-stream'))
  )
}

function toolOf(document: Json, prefix: string, entry: ReturnType<typeof eachOperation>[number]): Json | undefined {
  const { id, path, method, pathItem, operation } = entry
  const where = `paths.${path}.${method}`
  if (streamsOnly(document, operation, where)) return undefined
  const parameters = [...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []), ...((operation.parameters as unknown[]) ?? [])]
    .map((parameter, index) => resolve(document, parameter, `${where}.parameters[${index}]`))
    .filter((parameter) => !(parameter.in === 'header' && IGNORED_HEADERS.has(String(parameter.name).toLowerCase())))
  const properties: Json = {}
  const required: string[] = []
  const argumentsIn: Json[] = []
  for (const parameter of parameters) {
    const name = String(parameter.name)
    if (!['path', 'query', 'header'].includes(String(parameter.in)))
      fail(`${where}.${name}`, `parameters in ${parameter.in} cannot be tool arguments`)
    if (name in properties || name === BODY_ARGUMENT) fail(`${where}.${name}`, 'two parameters would be the same tool argument')
    const schema = inline(document, parameter.schema, `${where}.${name}`)
    properties[name] =
      typeof parameter.description === 'string' && isObject(schema) ? { ...schema, description: parameter.description } : schema
    if (parameter.required === true) required.push(name)
    argumentsIn.push({ name, in: parameter.in })
  }
  let bodyMediaType: string | undefined
  if (operation.requestBody !== undefined) {
    const body = resolve(document, operation.requestBody, `${where}.requestBody`)
    const content = isObject(body.content) ? body.content : {}
    bodyMediaType = 'application/json' in content ? 'application/json' : Object.keys(content)[0]
    if (bodyMediaType === undefined) fail(`${where}.requestBody`, 'has no media type')
    const schema = inline(document, resolve(document, content[bodyMediaType], `${where}.requestBody`).schema, `${where}.requestBody`)
    const description = typeof body.description === 'string' ? body.description : `The request body (${bodyMediaType}).`
    properties[BODY_ARGUMENT] = isObject(schema) ? { ...schema, description } : schema
    if (body.required === true) required.push(BODY_ARGUMENT)
  }
  const { scopes } = security(document, operation, where)
  const upper = method.toUpperCase()
  const text = [operation.description, operation.summary, id].find((part) => typeof part === 'string' && part !== '')
  const scopeLine = scopes.length > 0 ? `Requires the scopes: ${scopes.join(', ')} (or admin).` : 'Any valid token may call it.'
  return {
    name: id,
    title: typeof operation.summary === 'string' ? operation.summary : id,
    description: `${text}\n\n${upper} ${prefix}${path}. ${scopeLine}`,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    annotations: {
      readOnlyHint: upper === 'GET',
      destructiveHint: upper === 'DELETE' || upper === 'PUT',
      idempotentHint: upper === 'GET' || upper === 'PUT' || upper === 'DELETE',
      openWorldHint: false,
    },
    method: upper,
    path: prefix + path,
    arguments: argumentsIn,
    ...(bodyMediaType === undefined ? {} : { bodyMediaType }),
  }
}

function toolsFile(document: Json): string {
  const server = Array.isArray(document.servers) && isObject(document.servers[0]) ? String(document.servers[0].url) : '/'
  const prefix = new URL(server, 'http://localhost').pathname.replace(/\/+$/, '')
  const tools = eachOperation(document)
    .map((entry) => toolOf(document, prefix, entry))
    .filter((tool) => tool !== undefined)
  return [
    banner(GENERATOR, SOURCE),
    '/** Where a tool argument goes in the REST request: a path, query or header parameter (`body` is the body). */',
    "export interface ToolArgument {\n  name: string\n  in: 'path' | 'query' | 'header'\n}\n",
    '/** One MCP tool: what tools/list shows (name, title, description, inputSchema, annotations) and the REST request it makes. */',
    'export interface RestTool {',
    '  name: string',
    '  title: string',
    '  description: string',
    "  inputSchema: { type: 'object'; properties: Record<string, object>; required?: string[]; additionalProperties: false }",
    '  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean }',
    "  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'TRACE'",
    '  /** The URL path with `{name}` placeholders for the path arguments. */',
    '  path: string',
    '  arguments: ToolArgument[]',
    '  /** The Content-Type of the body, when the operation takes one. */',
    '  bodyMediaType?: string',
    '}\n',
    '/** Every REST operation as a tool, in document order. */',
    `export const restTools: RestTool[] = ${JSON.stringify(tools, null, 2)}\n`,
  ].join('\n')
}

/** The generated file for a parsed document. Pure: the same document gives a byte-identical file. */
export function mcpFilesOf(document: Json): GeneratedFile[] {
  return [{ path: 'src/generated/mcp/tools.ts', contents: toolsFile(document) }]
}

export async function generateMcpFiles(root: string): Promise<GeneratedFile[]> {
  return mcpFilesOf(parse(await readFile(join(root, SOURCE), 'utf8')) as Json)
}
