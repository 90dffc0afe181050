/**
 * `GET /api/v1`, the API's front door (decisions §13, "Front doors"): what a person or a crawler
 * opening the banner's "REST API" link finds. Outside the contract's paths (like /healthz), with no
 * credential, it links the contract (also as `Link: rel="service-desc"`, RFC 8631), the docs, the
 * collections (every list operation of the contract with the query parameters it takes, `fields`
 * among them: read from the generated manifest so that no path is written twice), the event stream
 * and GraphQL.
 */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../../config.ts'
import { operations, operationIds } from '../../generated/openapi/operations.ts'
import { baseUrl } from '../../http/locations.ts'

/** The names of an operation's query parameters, from its generated schema. */
function queryParameters(schema: object): string[] {
  const querystring: unknown = Reflect.get(schema, 'querystring')
  const properties: unknown = typeof querystring === 'object' && querystring !== null ? Reflect.get(querystring, 'properties') : undefined
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : []
}

/** The collections: the contract's list operations on a path with no parameter, with their query parameters. */
const collections = operationIds
  .map((id) => operations[id])
  .filter((operation) => operation.method === 'GET' && operation.operationId.startsWith('list') && !operation.path.includes('{'))
  .map((operation) => ({ ...operation, query: queryParameters(operation.schema) }))

/** A string field of the contract's `info`, read once. */
function infoField(contract: Record<string, unknown>, name: string): string | undefined {
  const info = contract.info
  const value: unknown = typeof info === 'object' && info !== null ? Reflect.get(info, name) : undefined
  return typeof value === 'string' ? value : undefined
}

export async function apiIndexRoutes(app: FastifyInstance, options: { config: AppConfig; contract: Record<string, unknown> }) {
  const { publicUrl, nodeEnv } = options.config
  const title = infoField(options.contract, 'title')
  const version = infoField(options.contract, 'version')
  app.get('/api/v1', async (request, reply) => {
    const base = baseUrl(request, publicUrl)
    reply.header('link', `<${base}/api/v1/openapi.json>; rel="service-desc", <${base}/docs>; rel="service-doc"`)
    reply.header('cache-control', 'public, max-age=300')
    return {
      title,
      version,
      links: {
        self: `${base}/api/v1`,
        openapi: `${base}/api/v1/openapi.json`,
        openapi_yaml: `${base}/api/v1/openapi.yaml`,
        docs: `${base}/docs`,
        graphql: `${base}/graphql`,
        graphql_schema: `${base}/graphql/schema.graphql`,
        ...(nodeEnv === 'production' ? {} : { graphiql: `${base}/graphiql` }),
        events: `${base}${operations.listEvents.url}`,
        event_stream: `${base}${operations.streamEvents.url}`,
      },
      collections: Object.fromEntries(
        collections.map((operation) => [
          operation.path.slice(1),
          { href: `${base}${operation.url}`, operationId: operation.operationId, scopes: operation.scopes, query: operation.query },
        ]),
      ),
    }
  })
}
