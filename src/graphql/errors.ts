/**
 * GraphQL errors (decisions §8): every error carries `extensions.code`; anything that is not one
 * of our ApiErrors or a GraphQL request error is reported as INTERNAL_SERVER_ERROR with its message
 * replaced. Status codes follow GraphQL-over-HTTP: with `Accept: application/graphql-response+json`
 * a request that never executed is 400 (unparseable) or 422 (invalid), one that executed is 200;
 * with the legacy application/json every such response is 200. In both, an outage (the database
 * unreachable, its connection lost, a statement timed out) is `DATABASE_UNAVAILABLE`, and a
 * response left without data by it (`data` null or absent) is 503 with Retry-After.
 */
import { GraphQLError, Kind, type ASTNode, type ExecutionResult, type FormattedExecutionResult } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import { isDatabaseUnavailable } from '../db/database-unavailable.ts'
import { driverError } from '../db/driver-errors.ts'
import { ApiError, DATABASE_RETRY_AFTER_SECONDS, graphqlCodeOf, reportsReason, type ErrorCode, type GraphqlErrorCode } from '../errors.ts'
import { requestProblem } from './http/request-problems.ts'

export const GRAPHQL_RESPONSE_MEDIA_TYPE = 'application/graphql-response+json'

/**
 * Mercurius' own errors a client can cause, by their code, as the catalogue error each stands
 * for (the malformed-request ones are `requestProblem`'s). A mutation over GET keeps Mercurius'
 * code: it is answered 405 below.
 */
const MERCURIUS_ERRORS: Readonly<Record<string, ErrorCode>> = {
  MER_ERR_GQL_PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  MER_ERR_GQL_PERSISTED_QUERY_NOT_SUPPORTED: 'PERSISTED_QUERY_NOT_ALLOWED',
  MER_ERR_GQL_QUERY_DEPTH: 'DEPTH_LIMIT_EXCEEDED',
  MER_ERR_METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
}

const codeOf = (error: unknown): unknown => (typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined)

function isMethodNotAllowed(error: unknown): boolean {
  return codeOf(error) === 'MER_ERR_METHOD_NOT_ALLOWED' || (error instanceof ApiError && error.code === 'METHOD_NOT_ALLOWED')
}

/** The catalogue error behind an error a resolver, a hook, the driver, Fastify or Mercurius raised. */
function apiErrorOf(original: Error | undefined): ApiError | undefined {
  if (original === undefined || original instanceof ApiError) return original
  // A driver's error reads as the same ApiError REST answers with (db/driver-errors.ts).
  const problem = driverError(original) ?? requestProblem(original)
  if (problem) return problem
  const code = codeOf(original)
  const mercurius = typeof code === 'string' && Object.hasOwn(MERCURIUS_ERRORS, code) ? MERCURIUS_ERRORS[code] : undefined
  return mercurius ? new ApiError(mercurius, original.message, { cause: original }) : undefined
}

/**
 * graphql-js's own errors (they carry no original error, or graphql-js's own), by the phase that
 * raised them, told by where they are located, never by their text (Mercurius wraps validation's
 * errors and the variables' coercion alike). Before execution: the parser's syntax error is
 * located by a position in the source, as there is no syntax tree yet; a variable's value that
 * does not coerce is located at that variable's definition alone: the client's input. The rest is
 * the document's (validation, or an operation that cannot be chosen), the rules about variables
 * included, which locate theirs at a variable's use as well (one used where its type does not
 * fit: its definition and its use; one never defined: its use and the operation). One rule
 * locates at a definition alone as coercion does, and so reads as input: a variable never used.
 * During execution such an error is graphql's completing a value the resolver returned (a null
 * for a non-null field, a scalar that does not serialize): the server's fault, as argument values
 * were coerced before execution began.
 */
function graphqlPhaseCode(error: GraphQLError, executed: boolean): ErrorCode {
  if (executed) return 'INTERNAL_SERVER_ERROR'
  if (error.nodes === undefined && error.positions !== undefined) return 'GRAPHQL_PARSE_FAILED'
  const located: readonly ASTNode[] = error.nodes ?? []
  if (located.length === 1 && located[0]!.kind === Kind.VARIABLE_DEFINITION) return 'BAD_USER_INPUT'
  return 'GRAPHQL_VALIDATION_FAILED'
}

interface FormattedError {
  message: string
  locations?: readonly { line: number; column: number }[]
  path?: readonly (string | number)[]
  extensions: { code: GraphqlErrorCode; [key: string]: unknown }
}

/** What GraphQL clients see of an ApiError: its catalogue code, and the REST code as `reason`. */
export function graphqlExtensions(error: ApiError): FormattedError['extensions'] {
  return {
    ...error.extensions,
    code: graphqlCodeOf(error.code),
    ...(reportsReason(error.code) ? { reason: error.code } : {}),
    ...(error.errors ? { errors: error.errors } : {}),
  }
}

/** One error as a GraphQL client sees it; `executed` says whether execution began. */
export function classify(error: GraphQLError, executed: boolean): FormattedError {
  const base = {
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
  }
  const apiError = apiErrorOf(error.originalError)
  if (apiError) return { message: apiError.detail, ...base, extensions: graphqlExtensions(apiError) }
  // graphql-js's own error: none under it, or the one graphql-js wrapped (a scalar's coercion).
  if (error.originalError === undefined || error.originalError instanceof GraphQLError) {
    const code = graphqlPhaseCode(error, executed)
    if (code !== 'INTERNAL_SERVER_ERROR') return { message: error.message, ...base, extensions: { code: graphqlCodeOf(code) } }
  }
  return { message: 'An internal error occurred; it has been logged.', ...base, extensions: { code: 'INTERNAL_SERVER_ERROR' } }
}

function flatten(errors: readonly GraphQLError[]): GraphQLError[] {
  return errors.flatMap((error) => {
    // Mercurius wraps a request's validation errors in one error; our ApiErrors carry field errors
    // under the same name, which are not GraphQL errors, and so does a refused connection
    // (Node's AggregateError of one error per address).
    // A mutation over GET keeps its code (answered 405 below) rather than its bare inner error.
    const ownErrors =
      error.originalError instanceof ApiError || isDatabaseUnavailable(error.originalError) || isMethodNotAllowed(error.originalError)
    const nested = ownErrors ? undefined : (error.originalError as { errors?: unknown } | undefined)?.errors
    if (Array.isArray(nested)) {
      return nested.map((inner) =>
        inner instanceof GraphQLError ? inner : new GraphQLError((inner as Error).message, { originalError: inner as Error }),
      )
    }
    return [error]
  })
}

export function wantsGraphqlResponse(accept: string | undefined): boolean {
  return accept?.toLowerCase().includes(GRAPHQL_RESPONSE_MEDIA_TYPE) === true
}

export function formatGraphqlErrors(
  execution: ExecutionResult & { statusCode?: number },
  context: MercuriusContext,
): { statusCode: number; response: ExecutionResult } {
  const executed = execution.data !== undefined
  const log = context.reply?.log ?? context.app.log
  const errors = flatten(execution.errors ?? []).map((error) => {
    const formatted = classify(error, executed)
    if (formatted.extensions.code === 'INTERNAL_SERVER_ERROR') log.error({ err: error.originalError ?? error }, 'graphql resolver failed')
    else if (formatted.extensions.code === 'BAD_REQUEST') log.info({ err: error.originalError ?? error }, 'graphql request malformed')
    else if (formatted.extensions.code === 'DATABASE_UNAVAILABLE')
      log.warn({ err: error.originalError ?? error }, 'graphql resolver failed: database unavailable')
    return formatted
  })
  const request = context.reply?.request
  // The request's log line names the error by its stable code (request-cost.ts).
  if (request?.cost && errors[0]) {
    request.cost.errorCode = errors[0].extensions.code
    request.cost.graphqlErrorCodes = errors.flatMap((error) => [
      error.extensions.code,
      ...(typeof error.extensions.reason === 'string' ? [error.extensions.reason] : []),
    ])
  }
  const modern = wantsGraphqlResponse(request?.headers.accept)
  // A mutation sent with GET is refused by HTTP method, whatever the media type (decisions §8).
  if ((execution.errors ?? []).some((error) => isMethodNotAllowed(error.originalError))) {
    context.reply?.header('allow', 'POST')
    return {
      statusCode: 405,
      response: formatted({
        errors: [{ message: 'Mutations must be sent with POST.', extensions: { code: graphqlCodeOf('METHOD_NOT_ALLOWED') } }],
        ...(request ? { extensions: { requestId: request.id } } : {}),
      }),
    }
  }
  let statusCode = 200
  const first = errors[0]?.extensions.code
  if (first === 'BAD_REQUEST' && !executed) {
    // A request that is not one GraphQL request is 400 in both media types, with no `data`.
    return {
      statusCode: 400,
      response: formatted({ errors, ...(request ? { extensions: { requestId: request.id } } : {}) }),
    }
  }
  if (first === 'UNAUTHENTICATED' && !executed) statusCode = 401
  else if (first === 'RATE_LIMITED') statusCode = 429
  else if (execution.data == null && errors.some((error) => error.extensions.code === 'DATABASE_UNAVAILABLE')) {
    // Nothing was obtained and the reason is an outage: 503 with Retry-After, as REST answers.
    // A response that carries data keeps 200 (GraphQL-over-HTTP: partial success), its failed
    // fields null with DATABASE_UNAVAILABLE errors.
    statusCode = 503
    context.reply?.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
  } else if (modern && !executed) statusCode = first === 'GRAPHQL_PARSE_FAILED' ? 400 : 422
  const extensions =
    context.cost || request
      ? { extensions: { ...(context.cost ? { cost: context.cost } : {}), ...(request ? { requestId: request.id } : {}) } }
      : {}
  return {
    statusCode,
    response: formatted(
      executed
        ? { data: execution.data, errors, ...extensions }
        : modern
          ? { errors, ...extensions }
          : { data: null, errors, ...extensions },
    ),
  }
}

/**
 * Subscription set-up errors do not pass through the error formatter: an ApiError raised while
 * subscribing (a resolver's, a limit's, the connection's) is converted here, with the same
 * extensions the formatter gives it; `nodes` locates it in the document.
 */
export function subscriptionError(error: unknown): unknown {
  return error instanceof ApiError ? locatedApiError(error) : error
}

/**
 * An ApiError as the GraphQLError that carries it, located at `nodes` of the document: thrown by
 * the limits' hooks, so that a refused operation says where, over HTTP and WebSocket alike.
 */
export function locatedApiError(error: ApiError, nodes?: readonly ASTNode[]): GraphQLError {
  return new GraphQLError(error.detail, { ...(nodes ? { nodes } : {}), originalError: error, extensions: graphqlExtensions(error) })
}

/**
 * Mercurius types the formatter's response as graphql's ExecutionResult (GraphQLError instances)
 * but sends what it is given as is: ours is already formatted, the shape clients receive.
 */
function formatted(response: FormattedExecutionResult & { extensions?: Record<string, unknown> }): ExecutionResult {
  return response as ExecutionResult
}
