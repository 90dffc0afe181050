/**
 * A tool call is the REST request it stands for, sent in-process (Fastify's inject) with the
 * caller's own Authorization header (decisions §13, "Agents"): the request walks the same hooks, route,
 * service and policy as one from any other client, so scopes, ownership, rate limits, idempotency
 * and errors hold once, in the one place that already enforces them. The answer becomes the tool's
 * result: the status, the headers an agent needs to go on, and the body; a 4xx or 5xx is a tool
 * error whose structured content is the problem (its `code` and `status` included).
 */
import type { FastifyInstance } from 'fastify'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { validationFailed, type FieldError } from '../errors.ts'
import type { RestTool } from '../generated/mcp/tools.ts'
import { problemFromError } from '../http/problems.ts'

/** The argument that carries the request body (codegen/mcp.ts). */
const BODY_ARGUMENT = 'body'
/** What an agent needs of a REST answer's headers: where a record lives, its version, a replay, a budget, a deprecation. */
const KEPT_HEADERS = [
  'location',
  'etag',
  'idempotent-replayed',
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
  'deprecation',
  'sunset',
  'link',
]

/**
 * Who makes the call, from the MCP request: its credential, its id (so the log lines of both share
 * it) and its Host (so the URLs the REST answer carries, `Location` and `page.next`, are those the
 * agent reached, as for a REST client).
 */
export interface RestCaller {
  authorization: string
  requestId: string
  host: string | undefined
}

/** The REST answer as a tool result: `{status, headers, body}`, also as text for clients that read only text. */
function toolResult(status: number, headers: Record<string, string>, body: unknown): CallToolResult {
  const structuredContent = { status, headers, body }
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, isError: status >= 400 }
}

/** Arguments the tool does not take, and path arguments it lacks: no REST request could carry them. */
function argumentProblems(tool: RestTool, args: Record<string, unknown>): FieldError[] {
  const problems: FieldError[] = []
  for (const name of Object.keys(args)) {
    const known = name === BODY_ARGUMENT ? tool.bodyMediaType !== undefined : tool.arguments.some((argument) => argument.name === name)
    if (!known) problems.push({ in: 'argument', name, message: `${tool.name} takes no argument "${name}".` })
  }
  for (const argument of tool.arguments)
    if (argument.in === 'path' && args[argument.name] === undefined)
      problems.push({ in: 'argument', name: argument.name, message: `${tool.name} needs the argument "${argument.name}".` })
  return problems
}

function queryValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'object' ? JSON.stringify(item) : String(item)))
  return [typeof value === 'object' ? JSON.stringify(value) : String(value)]
}

export async function callRestTool(
  app: FastifyInstance,
  tool: RestTool,
  args: Record<string, unknown>,
  caller: RestCaller,
): Promise<CallToolResult> {
  const problems = argumentProblems(tool, args)
  if (problems.length > 0) {
    const problem = problemFromError(validationFailed(problems), { id: caller.requestId })
    return toolResult(problem.status, {}, problem)
  }
  const path = tool.path.replace(/\{([^{}]+)\}/g, (_placeholder, name: string) => encodeURIComponent(String(args[name])))
  const query = new URLSearchParams()
  const headers: Record<string, string> = {
    authorization: caller.authorization,
    accept: 'application/json',
    'x-request-id': caller.requestId,
  }
  if (caller.host !== undefined) headers.host = caller.host
  for (const argument of tool.arguments) {
    const value = args[argument.name]
    if (value === undefined || argument.in === 'path') continue
    if (argument.in === 'query') for (const item of queryValues(value)) query.append(argument.name, item)
    else headers[argument.name.toLowerCase()] = String(value)
  }
  const body = args[BODY_ARGUMENT]
  if (body !== undefined && tool.bodyMediaType) headers['content-type'] = tool.bodyMediaType
  const search = query.size > 0 ? `?${query}` : ''
  const response = await app.inject({
    method: tool.method,
    url: `${path}${search}`,
    headers,
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })
  const kept = Object.fromEntries(
    KEPT_HEADERS.flatMap((name) => {
      const value = response.headers[name]
      return value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : String(value)]]
    }),
  )
  const type = String(response.headers['content-type'] ?? '')
  const parsed = response.body === '' ? null : /[/+]json\b/.test(type) ? response.json() : response.body
  return toolResult(response.statusCode, kept, parsed)
}
