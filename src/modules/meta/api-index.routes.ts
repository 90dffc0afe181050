/**
 * `GET /api/v1`, the API's front door (decisions §13, "Front doors"): what a person or a crawler
 * opening the banner's "REST API" link finds. Outside the contract's paths (like /healthz), with no
 * credential, it links the contract (also as `Link: rel="service-desc"`, RFC 8631), the docs, the
 * collections (every list operation of the contract, read from the generated manifest so that no
 * path is written twice), the event stream and GraphQL.
 */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../../config.ts'
import { operations, operationIds } from '../../generated/openapi/operations.ts'
import { baseUrl } from '../../http/locations.ts'

/** The query parameters an operation requires (a /sparse/ read's `fields`), read from its generated schema. */
function requiredQuery(schema: object): unknown {
  const querystring: unknown = Reflect.get(schema, 'querystring')
  return typeof querystring === 'object' && querystring !== null ? Reflect.get(querystring, 'required') : undefined
}

/**
 * The collections: the contract's list operations on a path with no parameter that open with no
 * query (not the /sparse/ reads, which need `fields`: decisions §16).
 */
const collections = operationIds
  .map((id) => operations[id])
  .filter(
    (operation) =>
      operation.method === 'GET' &&
      operation.operationId.startsWith('list') &&
      !operation.path.includes('{') &&
      requiredQuery(operation.schema) === undefined,
  )

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
          { href: `${base}${operation.url}`, operationId: operation.operationId, scopes: operation.scopes },
        ]),
      ),
    }
  })
}
