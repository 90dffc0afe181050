/**
 * The contract drives routing: every operation of openapi.yaml that a module implements is
 * registered at its URL with the generated validation and serialization schemas, and its handler
 * is found by operationId. A response can never carry a field the contract does not name, because
 * it is serialized with the contract's own response schema.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { operations, type OperationId } from '../generated/openapi/operations.ts'
import { ApiError, validationFailed } from '../errors.ts'
import { requireCaller } from '../plugins/auth.ts'
import { unstorableTextErrors } from './validation.ts'

export type OperationHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
export type OperationHandlers = Partial<Record<OperationId, OperationHandler>>

declare module 'fastify' {
  interface FastifyContextConfig {
    operationId?: OperationId
  }
}

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase()
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}

export function registerOperations(app: FastifyInstance, handlers: OperationHandlers): void {
  for (const operation of Object.values(operations)) {
    const handler = handlers[operation.operationId]
    if (!handler) continue
    const accepted: readonly string[] = operation.requestMediaTypes
    const route: RouteOptions = {
      method: operation.method,
      url: operation.url,
      schema: operation.schema as RouteOptions['schema'],
      config: {
        operationId: operation.operationId,
        ...(operation.method === 'GET'
          ? { cache: operation.operationId.startsWith('list') ? ('list' as const) : ('record' as const) }
          : {}),
      },
      handler,
      // Checked before the body is read, so no handler runs and no body is parsed for a request
      // without a valid credential; after onRequest, so the rate limiter still counts it.
      preParsing: async (request) => {
        if (operation.authenticated) requireCaller(request)
        if (!hasBody(request)) {
          // An empty body is no body, whatever Content-Type says (decisions §12): a generated
          // client's payOrder(id) sends `Content-Type: application/json` with nothing after it.
          if (!operation.requestBodyRequired) delete request.headers['content-type']
          return
        }
        const type = mediaType(request.headers['content-type'])
        if (accepted.length === 0 || type === undefined || !accepted.includes(type)) {
          const wanted = accepted.length === 0 ? 'no body' : accepted.join(' or ')
          throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `This operation takes ${wanted}, not ${type ?? 'an untyped body'}.`)
        }
      },
      preValidation: async (request) => {
        // Text PostgreSQL cannot store is refused before anything reads it (decisions §12).
        const unstorable = [...unstorableTextErrors(request.query, 'query'), ...unstorableTextErrors(request.body, 'body')]
        if (unstorable.length > 0) throw validationFailed(unstorable)
        if (request.body !== undefined || accepted.length === 0) return
        // An optional body that was left out validates as an empty object; a required one is an
        // error here, because Fastify skips validation when no media type selects a schema.
        if (!operation.requestBodyRequired) request.body = {}
        else throw validationFailed([{ in: 'body', name: '/', message: `a ${accepted.join(' or ')} body is required` }])
      },
    }
    app.route(route)
  }
}
