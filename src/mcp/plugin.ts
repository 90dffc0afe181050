/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, with the official SDK (decisions §13, "Agents",
 * docs/agents.md). Stateless: every POST builds its own MCP server and transport and answers with
 * JSON, so no session lives on an instance and any instance answers any request. The tools are the
 * REST operations (src/generated/mcp/tools.ts); a call is the REST request (rest-dispatch.ts).
 *
 * The bearer token is the REST one. Without a valid one, every MCP request is 401 whose
 * WWW-Authenticate names the protected-resource metadata (RFC 9728, the MCP authorization spec),
 * served at /.well-known/oauth-protected-resource, which names JWT_ISSUER as the authorization server
 * when one is set (decisions §18). Rate limits: a tool call (or a read of the event
 * log) is counted once, by the REST request it makes, like the same call made over REST; every
 * other MCP request is counted itself. A browser page's request is refused unless its Origin is
 * trusted (DNS rebinding, see trustedOrigin).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { ApiError, credentialRequired, forbidden } from '../errors.ts'
import { restTools } from '../generated/mcp/tools.ts'
import { SCOPES } from '../generated/required-scopes.ts'
import { baseUrl } from '../http/locations.ts'
import { sendProblem } from '../http/problems.ts'
import { callRestTool, type RestCaller } from './rest-dispatch.ts'
import { mcpResources } from './resources.ts'

export interface McpOptions {
  publicUrl: string | undefined
  /** JWT_ISSUER: the authorization server an agent obtains its token from (decisions §18); undefined without one. */
  authorizationServer: string | undefined
  /** CORS_ORIGINS: the browser origins that may call the API, and so /mcp. */
  corsOrigins: string[] | '*' | undefined
  /** The contracts as served: the served openapi.yaml (its `servers` this server) and the SDL. */
  contracts: { openApiYaml: string; graphqlSdl: string }
  version: string
}

const MCP_PATH = '/mcp'
const METADATA_PATH = '/.well-known/oauth-protected-resource'
const INSTRUCTIONS =
  'Each tool is one REST operation of this API (its operationId), called with your bearer token: the same scopes, ownership rules, rate limits and errors as over REST. ' +
  'A result is {status, headers, body}; a refusal is a tool error whose body is an RFC 9457 problem with a stable `code`. ' +
  'Pass Idempotency-Key to a create or action tool to make a retry safe. The contracts and the event log are resources.'

/** The tools as tools/list shows them: the generated entries without how each reaches REST. */
const listedTools = restTools.map(({ name, title, description, inputSchema, annotations }) => ({
  name,
  title,
  description,
  inputSchema,
  annotations,
}))
const toolsByName = new Map(restTools.map((tool) => [tool.name, tool]))

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * The SDK, loaded by the first MCP request: its schemas (zod) cost about 0.3 s of CPU to load, which
 * every start of a server (and every test process) paid whether or not an agent ever called.
 */
async function loadSdk() {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ])
  return { Server, WebStandardStreamableHTTPServerTransport, types }
}
type McpSdk = Awaited<ReturnType<typeof loadSdk>>

/**
 * Whether a browser page of `origin` may call /mcp. The transport spec asks servers to check Origin
 * against DNS rebinding (a page of evil.example resolving to 127.0.0.1): a page may if CORS_ORIGINS
 * lets it call the API, if it is PUBLIC_URL's own, or if it is served from loopback itself. Agents
 * outside a browser send no Origin.
 */
function trustedOrigin(origin: string, options: McpOptions): boolean {
  if (options.corsOrigins === '*' || options.corsOrigins?.includes(origin)) return true
  if (options.publicUrl !== undefined && new URL(options.publicUrl).origin === origin) return true
  return URL.canParse(origin) && LOOPBACK_HOSTS.has(new URL(origin).hostname)
}

/** Whether a JSON-RPC message becomes a REST request, which the rate limiter counts instead. */
function makesRestRequest(message: unknown, readsRest: (uri: string) => boolean): boolean {
  if (typeof message !== 'object' || message === null || !('method' in message)) return false
  const params = 'params' in message && typeof message.params === 'object' && message.params !== null ? message.params : {}
  if (message.method === 'tools/call') return true
  return message.method === 'resources/read' && 'uri' in params && typeof params.uri === 'string' && readsRest(params.uri)
}

/** The request as the SDK's web-standard transport reads it; the body is passed already parsed. */
function webRequest(request: FastifyRequest, base: string): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value)
    else if (Array.isArray(value)) headers.set(name, value.join(', '))
  }
  return new Request(`${base}${request.url}`, { method: request.method, headers })
}

function mcpServer(
  { Server, types }: McpSdk,
  app: FastifyInstance,
  options: McpOptions,
  resources: ReturnType<typeof mcpResources>,
  caller: RestCaller,
): Server {
  const {
    CallToolRequestSchema,
    ErrorCode,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ListToolsRequestSchema,
    McpError,
    ReadResourceRequestSchema,
  } = types
  // The low-level Server, not McpServer: the tools' input schemas are JSON Schema from the
  // contract, and their arguments are checked by the REST route itself, not by zod here.
  const server = new Server(
    { name: 'contract-api', title: 'Orders, articles and users API', version: options.version },
    { capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } }, instructions: INSTRUCTIONS },
  )
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listedTools }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = toolsByName.get(request.params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `No tool ${request.params.name}.`)
    return callRestTool(app, tool, request.params.arguments ?? {}, caller)
  })
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: resources.list }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: resources.templates }))
  server.setRequestHandler(ReadResourceRequestSchema, async (request) =>
    resources.read(request.params.uri, caller, { ErrorCode, McpError }),
  )
  return server
}

export async function mcpRoutes(app: FastifyInstance, options: McpOptions): Promise<void> {
  const resources = mcpResources(app, options.contracts)
  let sdk: Promise<McpSdk> | undefined

  // RFC 9728 at the root, and at the path-suffixed location newer MCP clients look first.
  for (const path of [METADATA_PATH, `${METADATA_PATH}${MCP_PATH}`]) {
    app.get(path, async (request) => {
      const base = baseUrl(request, options.publicUrl)
      // The identity provider whose tokens this service takes, when there is one (decisions §18);
      // without one, tokens are issued out of band (`npm run token`, decisions §2).
      return {
        resource: `${base}${MCP_PATH}`,
        resource_name: 'contract-api MCP server',
        ...(options.authorizationServer === undefined ? {} : { authorization_servers: [options.authorizationServer] }),
        bearer_methods_supported: ['header'],
        scopes_supported: SCOPES,
        resource_documentation: `${base}/docs`,
      }
    })
  }

  app.post(MCP_PATH, { config: { rateLimit: false } }, async (request, reply) => {
    if (!(request.caller && makesRestRequest(request.body, resources.readsRest))) await app.countRequest(request, reply)
    const origin = request.headers.origin
    if (origin !== undefined && !trustedOrigin(origin, options))
      return sendProblem(reply, forbidden(`Origin ${origin} may not call ${MCP_PATH}: set CORS_ORIGINS to let a page of it call the API.`))
    const base = baseUrl(request, options.publicUrl)
    if (!request.caller || request.headers.authorization === undefined) {
      const refused = credentialRequired(request.credentialError)
      const challenge = `${refused.headers['www-authenticate']}, resource_metadata="${base}${METADATA_PATH}"`
      return sendProblem(reply, new ApiError('UNAUTHENTICATED', refused.detail, { headers: { 'www-authenticate': challenge } }))
    }
    sdk ??= loadSdk()
    const { WebStandardStreamableHTTPServerTransport } = await sdk
    const server = mcpServer(await sdk, app, options, resources, {
      authorization: request.headers.authorization,
      requestId: request.id,
      host: request.headers.host,
    })
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    try {
      await server.connect(transport)
      const response = await transport.handleRequest(webRequest(request, base), { parsedBody: request.body })
      reply.code(response.status)
      response.headers.forEach((value, name) => {
        reply.header(name, value)
      })
      return reply.send(await response.text())
    } finally {
      await server.close()
    }
  })
}
