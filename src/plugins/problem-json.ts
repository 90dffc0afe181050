/**
 * RFC 9457 problem+json for every non-2xx answer: our own ApiErrors, Fastify's validation and
 * content-type errors, unknown routes (404) and known paths with the wrong method (405 + Allow).
 * A 5xx never carries a stack, SQL or driver message: it is logged and replaced.
 */
import type { FastifyError, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { constraintViolation } from '../db/constraint-violation.ts'
import { isDatabaseUnavailable } from '../db/database-unavailable.ts'
import { ApiError, codeForStatus, databaseUnavailable, isErrorCode, problemKind, validationFailed, type FieldError } from '../errors.ts'
import { fieldErrorsFromValidation } from '../contract/validation.ts'
import { redactCredentials } from '../http/redact-credentials.ts'

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  /** The request's target, when it is a URI reference (a malformed percent-encoding is not one). */
  instance?: string
  code: string
  /** The request's id (X-Request-Id), so that a client can quote it. */
  requestId: string
  errors?: FieldError[]
  /** EVENTS_EXPIRED: the event id to resume after (the newest pruned one), as in GraphQL's extensions. */
  resumeAfter?: string
}

/** A `%` that starts no escape (`%zz`): such a target is no URI reference. */
const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/

/**
 * A character a URI reference cannot hold as it is (RFC 3986 §3.3-3.4: a path or query takes
 * unreserved, sub-delims, `:@/?` and escapes): `{`, `}`, `[`, `]`, `|`, `^`, a space, a second `#`,
 * anything beyond ASCII. Node passes such a target through as the client sent it.
 */
const NOT_IN_URI_REFERENCE = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/gu

/**
 * The request's target as `instance`, as the client sent it (credentials redacted), with the
 * characters no URI reference may hold percent-encoded (UTF-8), so that it is the `format:
 * uri-reference` the contract promises. A target with a malformed escape cannot be one, and
 * escaping its `%` again would name a URL the client never sent: such a problem has no `instance`
 * (it is optional, RFC 9457 §3.1.5).
 */
function instanceOf(url: string): { instance?: string } {
  if (MALFORMED_ESCAPE.test(url)) return {}
  return { instance: redactCredentials(url).replace(NOT_IN_URI_REFERENCE, percentEncoded) }
}

/** A character as the percent-escapes of its UTF-8 bytes (a lone surrogate as U+FFFD's, never a throw). */
function percentEncoded(character: string): string {
  let escapes = ''
  for (const byte of Buffer.from(character, 'utf8')) escapes += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  return escapes
}

/** The problem for an error; `request.url` is absent when no request target was read (Node's own refusals). */
export function problemFromError(error: ApiError, request: { id: string; url?: string }): ProblemBody {
  const kind = problemKind(error.status)
  return {
    type: kind.type,
    title: kind.title,
    status: error.status,
    detail: error.detail,
    ...(request.url === undefined ? {} : instanceOf(request.url)),
    code: error.code,
    requestId: request.id,
    ...(error.errors ? { errors: error.errors } : {}),
    ...(typeof error.extensions.resumeAfter === 'string' ? { resumeAfter: error.extensions.resumeAfter } : {}),
  }
}

export function sendProblem(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value)
  // The request's log line names the error by its stable code (request-cost.ts).
  if (reply.request.cost) reply.request.cost.errorCode = error.code
  return reply.code(error.status).type('application/problem+json').send(problemFromError(error, reply.request))
}

/**
 * Every Fastify error that can reach a client, by its `FST_ERR_*` code, as the catalogue error it
 * stands for: a Fastify code is never an API code. Validation errors (FST_ERR_VALIDATION) carry
 * `validation` and are mapped with their field errors in `toApiError`; a 4xx that is not listed
 * here gets its status' generic code (`codeForStatus`).
 */
export const FASTIFY_ERRORS: Readonly<Record<string, () => ApiError>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json (PATCH also takes application/merge-patch+json).'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('MALFORMED_BODY', 'The body is empty but its Content-Type says JSON.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('MALFORMED_BODY', 'The body is not valid JSON.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('MALFORMED_BODY', 'The body is not valid JSON.'),
  FST_ERR_BAD_URL: () => new ApiError('INVALID_URL', 'The URL is not valid (a malformed percent-encoding).'),
  FST_ERR_INVALID_URL: () => new ApiError('INVALID_URL', 'The URL is not valid.'),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError('URI_TOO_LONG', 'A path parameter is longer than this server accepts.'),
  FST_ERR_NOT_FOUND: () => new ApiError('NOT_FOUND', 'No route matches this request.'),
}

/** Maps anything thrown while handling a request to the ApiError it stands for. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  const fastifyError = error as FastifyError & { validationContext?: string }
  if (fastifyError.validation) {
    const errors = fieldErrorsFromValidation(fastifyError.validation, fastifyError.validationContext)
    return validationFailed(errors)
  }
  const known =
    typeof fastifyError.code === 'string' && Object.hasOwn(FASTIFY_ERRORS, fastifyError.code)
      ? FASTIFY_ERRORS[fastifyError.code]
      : undefined
  if (known) return known()
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new ApiError('MALFORMED_BODY', 'The body is not valid JSON.')
  }
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error)
  const violation = constraintViolation(error)
  if (violation) return violation
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // A plugin's own 4xx: its status' catalogue code, its code kept only if the catalogue lists it.
    return new ApiError(isErrorCode(fastifyError.code) ? fastifyError.code : codeForStatus(status), fastifyError.message)
  }
  return new ApiError('INTERNAL', 'An unexpected error occurred; it has been logged.', { cause: error })
}

/**
 * find-my-way matches `/orders/` to `/orders/:id`, and `/orders//items` to `/orders/:id/items`,
 * with an empty parameter: for a client that is no route at all, so it is answered as one (404).
 */
const hasEmptyParameter = (params: unknown): boolean =>
  typeof params === 'object' && params !== null && Object.values(params).some((value) => value === '')

const noRoute = (request: FastifyRequest) =>
  new ApiError('NOT_FOUND', `No route matches ${request.method} ${request.url.split('?')[0] ?? '/'}.`)

/** Before a route's own hooks: an empty parameter means no route (after the app's, so it is counted). */
const refuseEmptyParameters: onRequestHookHandler = (request, _reply, done) => {
  done(hasEmptyParameter(request.params) ? noRoute(request) : undefined)
}

export default fp(
  async function problemJson(app) {
    // Mirrors the routes so that a 404 can tell "no such path" from "path exists, other method".
    const routes = FindMyWay()
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      for (const method of methods) {
        if (!routes.hasRoute(method as HTTPMethod, route.url)) routes.on(method as HTTPMethod, route.url, () => {})
      }
      if (route.url.includes(':')) route.onRequest = [refuseEmptyParameters, ...[route.onRequest ?? []].flat()]
    })

    app.setErrorHandler((error, request, reply) => {
      const apiError = toApiError(error)
      // An outage is the database's state, not a bug: a warning, and the client is told to retry.
      if (apiError.code === 'DATABASE_UNAVAILABLE') request.log.warn({ err: error }, 'request failed: database unavailable')
      else if (apiError.status >= 500) request.log.error({ err: error }, 'request failed')
      return sendProblem(reply, apiError)
    })

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? '/'
      const allowed = (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const).filter((method) => {
        const found = routes.find(method, path)
        return found !== null && !hasEmptyParameter(found.params)
      })
      if (allowed.length > 0) {
        return sendProblem(
          reply,
          new ApiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}.`, {
            headers: { allow: allowed.join(', ') },
          }),
        )
      }
      return sendProblem(reply, noRoute(request))
    })
  },
  { name: 'problem-json' },
)
