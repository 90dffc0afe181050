/**
 * GraphQL errors (decisions §8): every error carries `extensions.code`; anything that is not one
 * of our ApiErrors or a GraphQL request error is reported as INTERNAL_SERVER_ERROR with its message
 * replaced. Status codes follow GraphQL-over-HTTP: with `Accept: application/graphql-response+json`
 * a request that never executed is 400 (unparseable) or 422 (invalid), one that executed is 200;
 * with the legacy application/json every such response is 200. In both, an outage (the database
 * unreachable, its connection lost, a statement timed out) is `DATABASE_UNAVAILABLE`, and a
 * response left without data by it (`data` null or absent) is 503 with Retry-After.
 */
import { GraphQLError, type ExecutionResult } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import { constraintViolation } from '../db/constraint-violation.ts'
import { isDatabaseUnavailable } from '../db/database-unavailable.ts'
import { ApiError, DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable } from '../errors.ts'
import { requestProblem } from './request-problems.ts'

export type GraphqlErrorCode =
  | 'BAD_REQUEST'
  | 'BAD_USER_INPUT'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'GRAPHQL_PARSE_FAILED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'DEPTH_LIMIT_EXCEEDED'
  | 'COST_LIMIT_EXCEEDED'
  | 'RATE_LIMITED'
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_NOT_ALLOWED'
  | 'INTERNAL_SERVER_ERROR'
  | 'DATABASE_UNAVAILABLE'

export const GRAPHQL_RESPONSE_MEDIA_TYPE = 'application/graphql-response+json'

const CODE_BY_STATUS: Record<number, GraphqlErrorCode> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  412: 'CONFLICT',
  422: 'BAD_USER_INPUT',
  429: 'RATE_LIMITED',
}

/** Errors raised before execution, by the code mercurius or our limits give them. */
const REQUEST_ERROR_CODES: Record<string, GraphqlErrorCode> = {
  MER_ERR_GQL_QUERY_DEPTH: 'DEPTH_LIMIT_EXCEEDED',
  MER_ERR_GQL_PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  MER_ERR_GQL_PERSISTED_QUERY_NOT_SUPPORTED: 'PERSISTED_QUERY_NOT_ALLOWED',
  COST_LIMIT_EXCEEDED: 'COST_LIMIT_EXCEEDED',
  DEPTH_LIMIT_EXCEEDED: 'DEPTH_LIMIT_EXCEEDED',
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  PERSISTED_QUERY_NOT_ALLOWED: 'PERSISTED_QUERY_NOT_ALLOWED',
  RATE_LIMITED: 'RATE_LIMITED',
  MER_ERR_METHOD_NOT_ALLOWED: 'BAD_USER_INPUT',
}

interface FormattedError {
  message: string
  locations?: readonly { line: number; column: number }[]
  path?: readonly (string | number)[]
  extensions: { code: GraphqlErrorCode; [key: string]: unknown }
}

function classify(error: GraphQLError, executed: boolean): FormattedError {
  const original = error.originalError as (Error & { code?: string; extensions?: Record<string, unknown> }) | undefined
  const base = {
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
  }
  // A driver error that means an outage reads as the same ApiError REST answers with.
  const apiError =
    original instanceof ApiError
      ? original
      : isDatabaseUnavailable(original)
        ? databaseUnavailable(original)
        : (constraintViolation(original) ?? requestProblem(original))
  if (apiError) {
    return {
      message: apiError.detail,
      ...base,
      extensions: {
        code:
          apiError.code === 'DATABASE_UNAVAILABLE' || apiError.code === 'BAD_REQUEST'
            ? apiError.code
            : (CODE_BY_STATUS[apiError.status] ?? 'BAD_USER_INPUT'),
        reason: apiError.code,
        ...(apiError.errors ? { errors: apiError.errors } : {}),
      },
    }
  }
  const ownCode = error.extensions?.code
  if (!original && typeof ownCode === 'string' && ownCode in REQUEST_ERROR_CODES) {
    return { message: error.message, ...base, extensions: { ...error.extensions, code: REQUEST_ERROR_CODES[ownCode]! } }
  }
  const requestCode = original?.code ? REQUEST_ERROR_CODES[original.code] : undefined
  if (requestCode) return { message: error.message, ...base, extensions: { ...(original?.extensions ?? {}), code: requestCode } }
  if (!original) {
    if (error.message.startsWith('Syntax Error')) return { message: error.message, ...base, extensions: { code: 'GRAPHQL_PARSE_FAILED' } }
    if (/^Variable "\$/.test(error.message)) return { message: error.message, ...base, extensions: { code: 'BAD_USER_INPUT' } }
    if (!executed) return { message: error.message, ...base, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }
    // Errors graphql-js raises itself during execution (argument coercion, non-null violations).
    if (/^(Argument|Expected|Int cannot|String cannot|Enum|ID cannot)/.test(error.message)) {
      return { message: error.message, ...base, extensions: { code: 'BAD_USER_INPUT' } }
    }
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
      error.originalError instanceof ApiError ||
      isDatabaseUnavailable(error.originalError) ||
      (error.originalError as { code?: unknown } | undefined)?.code === 'MER_ERR_METHOD_NOT_ALLOWED'
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
  if (
    (execution.errors ?? []).some((error) => (error.originalError as { code?: string } | undefined)?.code === 'MER_ERR_METHOD_NOT_ALLOWED')
  ) {
    context.reply?.header('allow', 'POST')
    return {
      statusCode: 405,
      response: {
        errors: [{ message: 'Mutations must be sent with POST.', extensions: { code: 'BAD_USER_INPUT' } }],
        ...(request ? { extensions: { requestId: request.id } } : {}),
      } as unknown as ExecutionResult,
    }
  }
  let statusCode = 200
  const first = errors[0]?.extensions.code
  if (first === 'BAD_REQUEST' && !executed) {
    // A request that is not one GraphQL request is 400 in both media types, with no `data`.
    return {
      statusCode: 400,
      response: { errors, ...(request ? { extensions: { requestId: request.id } } : {}) } as unknown as ExecutionResult,
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
    response: (executed
      ? { data: execution.data, errors, ...extensions }
      : modern
        ? { errors, ...extensions }
        : { data: null, errors, ...extensions }) as unknown as ExecutionResult,
  }
}

/**
 * Subscription set-up errors do not pass through the error formatter: an ApiError raised while
 * subscribing is converted here, with the same code mapping.
 */
export function subscriptionError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error
  return new GraphQLError(error.detail, {
    originalError: error,
    extensions: { code: CODE_BY_STATUS[error.status] ?? 'BAD_USER_INPUT', reason: error.code },
  })
}
