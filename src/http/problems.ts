/**
 * RFC 9457 problem+json bodies, and what anything thrown while handling a request stands for in
 * the error catalogue (Fastify's errors by their code, a driver's through db/driver-errors.ts). The
 * error handler (plugins/problem-json.ts), the answers sent before routing (unrouted-answers.ts),
 * /metrics, the health routes and MCP all answer with these, so they live here, below the plugins
 * (docs/layout.md).
 */
import type { FastifyError, FastifyReply } from 'fastify'
import { fieldErrorsFromValidation } from '../contract/validation.ts'
import { driverError } from '../db/driver-errors.ts'
import { ApiError, codeForStatus, isErrorCode, problemKind, validationFailed, type FieldError } from '../errors.ts'
import { redactCredentials } from './redact-credentials.ts'

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

/**
 * A problem's media type: application/problem+json, or application/json for a client whose Accept
 * names application/json and neither problem+json nor a wildcard (docs/contracts.md: the contract
 * lists both, so that a generator reading only application/json still types problems).
 */
export function problemMediaType(accept: string | undefined): string {
  if (accept === undefined || !accept.includes('application/json')) return 'application/problem+json'
  const types = accept.split(',').map((range) => range.split(';')[0]!.trim().toLowerCase())
  const plain = types.includes('application/json') && !types.some((type) => type === 'application/problem+json' || type.endsWith('/*'))
  return plain ? 'application/json' : 'application/problem+json'
}

export function sendProblem(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value)
  // The request's log line names the error by its stable code (request-cost.ts).
  if (reply.request.cost) reply.request.cost.errorCode = error.code
  return reply.code(error.status).type(problemMediaType(reply.request.headers.accept)).send(problemFromError(error, reply.request))
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
  const driver = driverError(error)
  if (driver) return driver
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // A plugin's own 4xx: its status' catalogue code, its code kept only if the catalogue lists it.
    return new ApiError(isErrorCode(fastifyError.code) ? fastifyError.code : codeForStatus(status), fastifyError.message)
  }
  return new ApiError('INTERNAL', 'An unexpected error occurred; it has been logged.', { cause: error })
}
