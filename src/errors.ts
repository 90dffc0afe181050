/**
 * Every error the API reports on purpose, with a stable machine code and its HTTP status. The REST
 * problem+json handler and the GraphQL error formatter both read these, so a rule that fails the
 * same way in both styles reports the same code.
 *
 * `errorCatalogue` is the one closed list of codes: `ApiError` takes a code from it and reads the
 * status there, so a code that is not listed does not compile. `graphql` is the
 * `extensions.code` a GraphQL client sees for it (decisions §8); `graphqlOnly` marks the codes only
 * GraphQL raises (the others are also given to GraphQL clients as `extensions.reason`). The "Error codes" table of docs/errors.md lists the
 * same codes (test/errors.test.ts keeps the two equal).
 */
export const errorCatalogue = {
  // 400: the request breaks the contract.
  VALIDATION_FAILED: { status: 400, graphql: 'BAD_USER_INPUT' },
  // A body that is not JSON (or not UTF-8): on /graphql a request that is not one GraphQL request.
  MALFORMED_BODY: { status: 400, graphql: 'BAD_REQUEST' },
  INVALID_URL: { status: 400, graphql: 'BAD_USER_INPUT' },
  // Node could not parse the request line or a header: answered before any route (no GraphQL either).
  MALFORMED_REQUEST: { status: 400, graphql: 'BAD_REQUEST' },
  INVALID_ID: { status: 400, graphql: 'BAD_USER_INPUT' },
  // GraphQL's nodes(ids:) with more than 100 ids.
  TOO_MANY_IDS: { status: 400, graphql: 'BAD_USER_INPUT' },
  INVALID_PAGE_SIZE: { status: 400, graphql: 'BAD_USER_INPUT' },
  INVALID_CURSOR: { status: 400, graphql: 'BAD_USER_INPUT' },
  INVALID_SORT: { status: 400, graphql: 'BAD_USER_INPUT' },
  CURSOR_MISMATCH: { status: 400, graphql: 'BAD_USER_INPUT' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, graphql: 'BAD_USER_INPUT' },
  // A GraphQL request that is not one GraphQL request (malformed body, wrong media type, ...).
  BAD_REQUEST: { status: 400, graphql: 'BAD_REQUEST' },
  // A GraphQL document that does not parse.
  GRAPHQL_PARSE_FAILED: { status: 400, graphql: 'GRAPHQL_PARSE_FAILED', graphqlOnly: true },
  // graphql-js refused the request's variables or an argument's value.
  BAD_USER_INPUT: { status: 400, graphql: 'BAD_USER_INPUT', graphqlOnly: true },
  // A WebSocket subscription the connection cannot take.
  TOO_MANY_SUBSCRIPTIONS: { status: 400, graphql: 'BAD_REQUEST' },
  UNAUTHENTICATED: { status: 401, graphql: 'UNAUTHENTICATED' },
  FORBIDDEN: { status: 403, graphql: 'FORBIDDEN' },
  NOT_FOUND: { status: 404, graphql: 'NOT_FOUND' },
  METHOD_NOT_ALLOWED: { status: 405, graphql: 'BAD_REQUEST' },
  VERSION_NOT_ACCEPTABLE: { status: 406, graphql: 'BAD_USER_INPUT' },
  // The client did not send its whole request in time (HTTP_HEADERS_TIMEOUT, HTTP_REQUEST_TIMEOUT).
  REQUEST_TIMEOUT: { status: 408, graphql: 'BAD_REQUEST' },
  // 409: the record's state forbids it.
  CONFLICT: { status: 409, graphql: 'CONFLICT' },
  ORDER_NOT_PENDING: { status: 409, graphql: 'CONFLICT' },
  ORDER_STATE_CONFLICT: { status: 409, graphql: 'CONFLICT' },
  ORDER_NOT_DELETABLE: { status: 409, graphql: 'CONFLICT' },
  PRODUCT_EXISTS: { status: 409, graphql: 'CONFLICT' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, graphql: 'CONFLICT' },
  UNIQUE_VIOLATION: { status: 409, graphql: 'CONFLICT' },
  // A resume point (an event id) older than the event log's retention: the events after it are gone.
  EVENTS_EXPIRED: { status: 410, graphql: 'BAD_USER_INPUT' },
  PRECONDITION_FAILED: { status: 412, graphql: 'CONFLICT' },
  PAYLOAD_TOO_LARGE: { status: 413, graphql: 'BAD_USER_INPUT' },
  URI_TOO_LONG: { status: 414, graphql: 'BAD_USER_INPUT' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, graphql: 'BAD_USER_INPUT' },
  // The request line and headers are over Node's limit (16 KiB).
  HEADERS_TOO_LARGE: { status: 431, graphql: 'BAD_REQUEST' },
  // 422: the request fits the contract but breaks a business rule.
  UNKNOWN_SKU: { status: 422, graphql: 'BAD_USER_INPUT' },
  UNKNOWN_USER: { status: 422, graphql: 'BAD_USER_INPUT' },
  UNKNOWN_COMPANY: { status: 422, graphql: 'BAD_USER_INPUT' },
  ORDER_TOTAL_TOO_LARGE: { status: 422, graphql: 'BAD_USER_INPUT' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, graphql: 'BAD_USER_INPUT' },
  CHECK_VIOLATION: { status: 422, graphql: 'BAD_USER_INPUT' },
  REFERENCE_NOT_FOUND: { status: 422, graphql: 'BAD_USER_INPUT' },
  MISSING_VALUE: { status: 422, graphql: 'BAD_USER_INPUT' },
  // A webhook URL that is not https or resolves to an address that is not global unicast (loopback, private, link-local, special-purpose).
  WEBHOOK_TARGET_REFUSED: { status: 422, graphql: 'BAD_USER_INPUT' },
  // GraphQL documents refused before execution (answered 422 with graphql-response+json).
  GRAPHQL_VALIDATION_FAILED: { status: 422, graphql: 'GRAPHQL_VALIDATION_FAILED', graphqlOnly: true },
  DEPTH_LIMIT_EXCEEDED: { status: 422, graphql: 'DEPTH_LIMIT_EXCEEDED', graphqlOnly: true },
  COST_LIMIT_EXCEEDED: { status: 422, graphql: 'COST_LIMIT_EXCEEDED', graphqlOnly: true },
  PERSISTED_QUERY_NOT_FOUND: { status: 422, graphql: 'PERSISTED_QUERY_NOT_FOUND', graphqlOnly: true },
  PERSISTED_QUERY_NOT_ALLOWED: { status: 422, graphql: 'PERSISTED_QUERY_NOT_ALLOWED', graphqlOnly: true },
  // A GraphQL response (or subscription event) that grew past GRAPHQL_MAX_RESPONSE_BYTES: abandoned
  // after execution, answered like a refused document (422 with graphql-response+json), since the
  // client must ask for less (graphql/limits/response-size.ts).
  RESPONSE_TOO_LARGE: { status: 422, graphql: 'RESPONSE_TOO_LARGE', graphqlOnly: true },
  RATE_LIMITED: { status: 429, graphql: 'RATE_LIMITED' },
  // The caller already holds its most event streams (SSE) on this instance.
  TOO_MANY_STREAMS: { status: 429, graphql: 'RATE_LIMITED' },
  INTERNAL: { status: 500, graphql: 'INTERNAL_SERVER_ERROR' },
  INTERNAL_SERVER_ERROR: { status: 500, graphql: 'INTERNAL_SERVER_ERROR', graphqlOnly: true },
  SERVICE_UNAVAILABLE: { status: 503, graphql: 'INTERNAL_SERVER_ERROR' },
  EVENTS_UNAVAILABLE: { status: 503, graphql: 'INTERNAL_SERVER_ERROR' },
  DATABASE_UNAVAILABLE: { status: 503, graphql: 'DATABASE_UNAVAILABLE' },
} as const satisfies Record<string, { status: number; graphql: string; graphqlOnly?: true }>

export type ErrorCode = keyof typeof errorCatalogue
type Catalogue = typeof errorCatalogue
/** The codes the catalogue answers with `status`: what a helper like `conflict` may be given. */
export type ErrorCodeWithStatus<Status extends number> = {
  [Code in ErrorCode]: Catalogue[Code]['status'] extends Status ? Code : never
}[ErrorCode]
/** What a GraphQL client sees in `errors[].extensions.code` (decisions §8). */
export type GraphqlErrorCode = Catalogue[ErrorCode]['graphql']

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(errorCatalogue, code)
}

export function statusOf(code: ErrorCode): number {
  return errorCatalogue[code].status
}

export function graphqlCodeOf(code: ErrorCode): GraphqlErrorCode {
  return errorCatalogue[code].graphql
}

/**
 * Whether GraphQL clients also get the code as `extensions.reason`: every code REST answers with
 * too, so a rule reads the same in both styles; not the codes only GraphQL raises, which are
 * already the `extensions.code`.
 */
export function reportsReason(code: ErrorCode): boolean {
  return !('graphqlOnly' in errorCatalogue[code])
}

/**
 * The code for an error that arrives with only an HTTP status (a 4xx raised by a library, an
 * idempotent outcome stored under a code this catalogue no longer has): the catalogue's generic
 * code for that status.
 */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'UNAUTHENTICATED'
    case 403:
      return 'FORBIDDEN'
    case 404:
      return 'NOT_FOUND'
    case 405:
      return 'METHOD_NOT_ALLOWED'
    case 406:
      return 'VERSION_NOT_ACCEPTABLE'
    case 408:
      return 'REQUEST_TIMEOUT'
    case 409:
      return 'CONFLICT'
    case 412:
      return 'PRECONDITION_FAILED'
    case 413:
      return 'PAYLOAD_TOO_LARGE'
    case 414:
      return 'URI_TOO_LONG'
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE'
    case 429:
      return 'RATE_LIMITED'
    case 431:
      return 'HEADERS_TOO_LARGE'
    case 503:
      return 'SERVICE_UNAVAILABLE'
  }
  return status >= 500 ? 'INTERNAL' : 'BAD_REQUEST'
}

/** Where an input error is: REST's four places, and for GraphQL an argument or a variable. */
export type ProblemLocation = 'body' | 'query' | 'path' | 'header' | 'argument' | 'variable'

export interface FieldError {
  in: ProblemLocation
  name: string
  message: string
}

export interface ApiErrorOptions {
  detail?: string
  errors?: FieldError[]
  headers?: Record<string, string>
  /** Extra `extensions` fields for GraphQL clients (a limit and the measured value, ...). */
  extensions?: Record<string, unknown>
  cause?: unknown
}

/** Slug of the problem `type` URI and the human title for each status we answer with. */
const problemKinds: Record<number, { slug: string; title: string }> = {
  400: { slug: 'bad-request', title: 'Bad Request' },
  401: { slug: 'unauthenticated', title: 'Unauthorized' },
  403: { slug: 'forbidden', title: 'Forbidden' },
  404: { slug: 'not-found', title: 'Not Found' },
  405: { slug: 'method-not-allowed', title: 'Method Not Allowed' },
  406: { slug: 'not-acceptable', title: 'Not Acceptable' },
  408: { slug: 'request-timeout', title: 'Request Timeout' },
  409: { slug: 'conflict', title: 'Conflict' },
  410: { slug: 'gone', title: 'Gone' },
  412: { slug: 'precondition-failed', title: 'Precondition Failed' },
  413: { slug: 'payload-too-large', title: 'Content Too Large' },
  414: { slug: 'uri-too-long', title: 'URI Too Long' },
  415: { slug: 'unsupported-media-type', title: 'Unsupported Media Type' },
  422: { slug: 'unprocessable', title: 'Unprocessable Content' },
  429: { slug: 'quota-exceeded', title: 'Too Many Requests' },
  431: { slug: 'headers-too-large', title: 'Request Header Fields Too Large' },
  500: { slug: 'internal', title: 'Internal Server Error' },
  503: { slug: 'unavailable', title: 'Service Unavailable' },
}

export function problemKind(status: number): { type: string; title: string } {
  const kind = problemKinds[status] ?? (status >= 500 ? problemKinds[500]! : problemKinds[400]!)
  return { type: `/problems/${kind.slug}`, title: kind.title }
}

export class ApiError extends Error {
  readonly status: number
  readonly code: ErrorCode
  readonly detail: string
  readonly errors: FieldError[] | undefined
  readonly headers: Record<string, string>
  readonly extensions: Record<string, unknown>

  constructor(code: ErrorCode, detail: string, options: ApiErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ApiError'
    this.status = statusOf(code)
    this.code = code
    this.detail = detail
    this.errors = options.errors
    this.headers = options.headers ?? {}
    this.extensions = options.extensions ?? {}
  }
}

export const badRequest = (code: ErrorCodeWithStatus<400>, detail: string, errors?: FieldError[]) =>
  new ApiError(code, detail, errors ? { errors } : {})

export const validationFailed = (errors: FieldError[]) =>
  new ApiError('VALIDATION_FAILED', `The request is invalid: ${errors.length} problem(s) found.`, { errors })

/**
 * The one 401 (decisions §2, RFC 6750): REST, GraphQL over HTTP and the WebSocket upgrade all
 * answer a missing or refused credential with it. `tokenWasSent` picks the WWW-Authenticate form:
 * a refused token names why (`invalid_token`), a missing one only names the scheme.
 */
export const unauthenticated = (detail: string, tokenWasSent: boolean) =>
  new ApiError('UNAUTHENTICATED', detail, {
    headers: {
      'www-authenticate': tokenWasSent
        ? `Bearer realm="api", error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`
        : 'Bearer realm="api"',
    },
  })

/** Where a caller sends its credential: the Authorization header, or a WebSocket's connection_init. */
export type CredentialCarrier = 'header' | 'connection_init'

const CREDENTIAL_MISSING: Record<CredentialCarrier, string> = {
  header: 'A bearer token is required.',
  connection_init: 'Send {"Authorization": "Bearer <token>"} in connection_init.',
}

/**
 * The 401 for a caller without a usable credential, from why the auth plugin refused the one it
 * sent (undefined: none was sent). REST answers it as problem+json, GraphQL over HTTP as its
 * `errors`, the WebSocket as the close reason of 4401/4403.
 */
export const credentialRequired = (credentialError: string | undefined, carrier: CredentialCarrier = 'header') =>
  unauthenticated(credentialError ?? CREDENTIAL_MISSING[carrier], credentialError !== undefined)

export const forbidden = (detail: string) => new ApiError('FORBIDDEN', detail)

export const notFound = (what: string) => new ApiError('NOT_FOUND', `${what} does not exist.`)

export const conflict = (code: ErrorCodeWithStatus<409>, detail: string, headers?: Record<string, string>) =>
  new ApiError(code, detail, headers ? { headers } : {})

export const preconditionFailed = (detail: string) => new ApiError('PRECONDITION_FAILED', detail)

export const unprocessable = (code: ErrorCodeWithStatus<422>, detail: string, errors?: FieldError[]) =>
  new ApiError(code, detail, errors ? { errors } : {})

/** How long a client should wait before retrying a request the database could not serve. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

/** The database is unreachable, its connection died or a statement timed out (decisions §12). */
export const databaseUnavailable = (cause?: unknown) =>
  new ApiError('DATABASE_UNAVAILABLE', 'The database is unavailable; retry shortly.', {
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
    ...(cause === undefined ? {} : { cause }),
  })
