/**
 * What an agent can read besides calling tools (decisions §13, "Agents"): the two contracts, as the service
 * serves them, and the caller's event log. The event log is read through the listEvents tool, so it
 * shows exactly the events the caller may read, in the REST shape, with the REST errors (a resume
 * point past the retention is EVENTS_EXPIRED). It is not subscribable: the service speaks MCP
 * statelessly, with no stream that outlives a request to push `notifications/resources/updated`
 * on; an agent reads it again with `after` (or follows GET /api/v1/events/stream or a webhook).
 */
import type { ErrorCode, McpError, ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js'
import { restTools } from '../generated/mcp/tools.ts'
import { callRestTool, type RestCaller } from './rest-dispatch.ts'
import type { FastifyInstance } from 'fastify'

/** The MCP specification's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002
const EVENTS_URI = 'api://events'
/** The query parameters of the event log resource: those listEvents takes. */
const EVENTS_PARAMETERS = ['after', 'types', 'limit']

/** What a refused read throws: the SDK's error class and codes. */
interface McpErrors {
  ErrorCode: typeof ErrorCode
  McpError: typeof McpError
}

export interface McpResources {
  list: Resource[]
  templates: ResourceTemplate[]
  /** `errors`: the SDK's, as plugin.ts loaded it on the first MCP request (this module imports only its types). */
  read(uri: string, caller: RestCaller, errors: McpErrors): Promise<ReadResourceResult>
  /** Whether reading `uri` is a REST request (counted against the caller's budget by that request). */
  readsRest(uri: string): boolean
}

export function mcpResources(app: FastifyInstance, contracts: { openApiYaml: string; graphqlSdl: string }): McpResources {
  const listEvents = restTools.find((tool) => tool.name === 'listEvents')
  if (!listEvents) throw new Error('openapi.yaml has no listEvents operation: the event log resource reads through it')
  const documents = [
    {
      uri: 'api://contracts/openapi.yaml',
      name: 'openapi.yaml',
      title: 'The REST contract (OpenAPI 3.1), as served',
      description: 'Every REST operation, its parameters, bodies, answers and problems; each tool is one of its operations.',
      mimeType: 'application/yaml',
      // Read when asked for: the served YAML is built on first use (http/served-contract.ts).
      text: () => contracts.openApiYaml,
    },
    {
      uri: 'api://contracts/schema.graphql',
      name: 'schema.graphql',
      title: 'The GraphQL contract (SDL)',
      description: 'The GraphQL schema served at /graphql, over the same records and rules as the REST contract.',
      mimeType: 'application/graphql',
      text: () => contracts.graphqlSdl,
    },
  ]
  const eventsDescription =
    "The caller's event log, oldest first (GET /api/v1/events): order.created, order.status_changed, article.created, comment.added, on the records the caller may read. Read it again with ?after=<the last id> for what is new."
  return {
    list: [
      ...documents.map(({ text: _text, ...resource }) => resource),
      { uri: EVENTS_URI, name: 'events', title: 'Event log', description: eventsDescription, mimeType: 'application/json' },
    ],
    templates: [
      {
        uriTemplate: `${EVENTS_URI}{?after,types,limit}`,
        name: 'events-after',
        title: 'Event log after an event',
        description: `${eventsDescription} after: an event id; types: comma-separated types; limit: 1-100.`,
        mimeType: 'application/json',
      },
    ],
    readsRest: (uri) => uri === EVENTS_URI || uri.startsWith(`${EVENTS_URI}?`),
    async read(uri, caller, { ErrorCode, McpError }) {
      const document = documents.find((candidate) => candidate.uri === uri)
      if (document) return { contents: [{ uri, mimeType: document.mimeType, text: document.text() }] }
      if (!(uri === EVENTS_URI || uri.startsWith(`${EVENTS_URI}?`))) throw new McpError(RESOURCE_NOT_FOUND, `No resource ${uri}.`, { uri })
      const query = new URLSearchParams(uri.slice(EVENTS_URI.length + 1))
      const unknown = [...query.keys()].filter((key) => !EVENTS_PARAMETERS.includes(key))
      if (unknown.length > 0)
        throw new McpError(ErrorCode.InvalidParams, `The event log takes only ${EVENTS_PARAMETERS.join(', ')}; not ${unknown.join(', ')}.`)
      const result = await callRestTool(app, listEvents, Object.fromEntries(query), caller)
      // A refusal (an expired resume point, a malformed `after`) is the problem, with its code and status.
      if (result.isError) throw new McpError(ErrorCode.InvalidParams, `The event log refused ${uri}.`, result.structuredContent)
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(result.structuredContent?.body) }] }
    },
  }
}
