/**
 * The contract drives routing: every operation of openapi.yaml that a module implements is
 * registered at its URL with the generated validation and serialization schemas, and its handler
 * is found by operationId. A response can never carry a field the contract does not name, because
 * it is serialized with the contract's own response schema.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify'
import { operationIds, operations, type OperationId } from '../generated/openapi/operations.ts'
import type { operations as ContractOperations } from '../generated/openapi/paths.ts'
import { ApiError, validationFailed } from '../errors.ts'
import { requireCaller } from '../auth/caller.ts'
import { unstorableTextErrors } from '../contract/validation.ts'
import type { DeprecatedOperation } from '../contract/deprecated-operations.ts'

type ParametersOf<K extends OperationId> = ContractOperations[K]['parameters']
/** An absent part (openapi-typescript's `?: never`) as an object with no properties. */
type Part<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>
/** Query parameters the contract gives a default: present once AJV has applied it. */
type WithDefaults<Query, Defaulted extends PropertyKey> = Omit<Query, Defaulted> & Required<Pick<Query, Defaulted & keyof Query>>
/** Node.js hands header names over in lower case, whatever case the contract writes them in. */
type LowerCaseKeys<T> = { [Name in keyof T as Lowercase<Name & string>]: T[Name] }
/** The body of any of the request's media types; an optional body left out arrives as `{}` (see preValidation). */
type BodyOf<RequestBody> = [NonNullable<RequestBody>] extends [never]
  ? undefined
  : NonNullable<RequestBody> extends { content: infer Content }
    ? Content[keyof Content]
    : never

/** Whether the request carries the operation's query-string credential (`queryCredential`), when it has one. */
function carriesQueryCredential(request: FastifyRequest, name: string | null): boolean {
  if (name === null || request.headers.authorization !== undefined) return false
  const query: unknown = request.query
  return typeof query === 'object' && query !== null && Object.hasOwn(query, name)
}

/** What Fastify hands an operation's handler once the contract has validated (and coerced) it. */
export interface OperationRequest<K extends OperationId> extends RouteGenericInterface {
  Params: Part<ParametersOf<K>['path']>
  Querystring: WithDefaults<Part<ParametersOf<K>['query']>, (typeof operations)[K]['queryDefaults'][number]>
  Headers: LowerCaseKeys<Part<ParametersOf<K>['header']>>
  Body: BodyOf<ContractOperations[K]['requestBody']>
}

export type OperationHandler<K extends OperationId> = (
  request: FastifyRequest<OperationRequest<K>>,
  reply: FastifyReply<OperationRequest<K>>,
) => Promise<unknown>
/** Handlers by operationId, each typed by its operation in openapi.yaml. */
export type OperationHandlers = { [K in OperationId]?: OperationHandler<K> }

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

export function registerOperations(
  app: FastifyInstance,
  handlers: OperationHandlers,
  deprecated: ReadonlyMap<string, DeprecatedOperation> = new Map(),
): void {
  for (const operationId of operationIds) registerOperation(app, operationId, handlers, deprecated.get(operationId))
}

function registerOperation<K extends OperationId>(
  app: FastifyInstance,
  operationId: K,
  handlers: OperationHandlers,
  deprecated: DeprecatedOperation | undefined,
): void {
  const handler = handlers[operationId]
  if (!handler) return
  const operation = operations[operationId]
  const accepted: readonly string[] = operation.requestMediaTypes
  app.route<OperationRequest<K>>({
    // Only a deprecated operation gets this hook (its headers, count and log line): the others pay nothing.
    ...(deprecated ? { onRequest: app.deprecation.operationHook(deprecated) } : {}),
    method: operation.method,
    url: operation.url,
    schema: operation.schema,
    config: {
      operationId,
      ...(operation.method === 'GET' ? { cache: operationId.startsWith('list') ? ('list' as const) : ('record' as const) } : {}),
    },
    handler,
    // Checked before the body is read, so no handler runs and no body is parsed for a request
    // without a valid credential; after onRequest, so the rate limiter still counts it.
    // Callback-style: no promise per hook per request; Fastify turns a throw into the
    // request's error all the same.
    preParsing: (request: FastifyRequest, _reply: FastifyReply, payload, done) => {
      // A credential in the query string (the stream ticket) is the handler's to redeem.
      if (operation.authenticated && !carriesQueryCredential(request, operation.queryCredential)) requireCaller(request)
      if (!hasBody(request)) {
        // An empty body is no body, whatever Content-Type says (decisions §12): a generated
        // client's payOrder(id) sends `Content-Type: application/json` with nothing after it.
        if (!operation.requestBodyRequired) delete request.headers['content-type']
        return done(null, payload)
      }
      const type = mediaType(request.headers['content-type'])
      if (accepted.length === 0 || type === undefined || !accepted.includes(type)) {
        const wanted = accepted.length === 0 ? 'no body' : accepted.join(' or ')
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `This operation takes ${wanted}, not ${type ?? 'an untyped body'}.`)
      }
      done(null, payload)
    },
    preValidation: (request: FastifyRequest, _reply: FastifyReply, done) => {
      // Text PostgreSQL cannot store is refused before anything reads it (decisions §12).
      const unstorable = [...unstorableTextErrors(request.query, 'query'), ...unstorableTextErrors(request.body, 'body')]
      if (unstorable.length > 0) throw validationFailed(unstorable)
      if (request.body !== undefined || accepted.length === 0) return done()
      // An optional body that was left out validates as an empty object; a required one is an
      // error here, because Fastify skips validation when no media type selects a schema.
      if (!operation.requestBodyRequired) request.body = {}
      else throw validationFailed([{ in: 'body', name: '/', message: `a ${accepted.join(' or ')} body is required` }])
      done()
    },
  })
}
