/**
 * Every error the API reports on purpose, with a stable machine code and its HTTP status. The REST
 * problem+json handler and the GraphQL error formatter both read these, so a rule that fails the
 * same way in both styles reports the same code.
 */
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
  409: { slug: 'conflict', title: 'Conflict' },
  412: { slug: 'precondition-failed', title: 'Precondition Failed' },
  413: { slug: 'payload-too-large', title: 'Content Too Large' },
  415: { slug: 'unsupported-media-type', title: 'Unsupported Media Type' },
  422: { slug: 'unprocessable', title: 'Unprocessable Content' },
  429: { slug: 'quota-exceeded', title: 'Too Many Requests' },
  500: { slug: 'internal', title: 'Internal Server Error' },
  503: { slug: 'unavailable', title: 'Service Unavailable' },
}

export function problemKind(status: number): { type: string; title: string } {
  const kind = problemKinds[status] ?? (status >= 500 ? problemKinds[500]! : problemKinds[400]!)
  return { type: `/problems/${kind.slug}`, title: kind.title }
}

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly detail: string
  readonly errors: FieldError[] | undefined
  readonly headers: Record<string, string>

  constructor(status: number, code: string, detail: string, options: ApiErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ApiError'
    this.status = status
    this.code = code
    this.detail = detail
    this.errors = options.errors
    this.headers = options.headers ?? {}
  }
}

export const badRequest = (code: string, detail: string, errors?: FieldError[]) => new ApiError(400, code, detail, errors ? { errors } : {})

export const validationFailed = (errors: FieldError[]) =>
  new ApiError(400, 'VALIDATION_FAILED', `The request is invalid: ${errors.length} problem(s) found.`, { errors })

export const unauthenticated = (detail: string, tokenWasSent: boolean) =>
  new ApiError(401, 'UNAUTHENTICATED', detail, {
    headers: {
      'www-authenticate': tokenWasSent
        ? `Bearer realm="api", error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`
        : 'Bearer realm="api"',
    },
  })

export const forbidden = (detail: string) => new ApiError(403, 'FORBIDDEN', detail)

export const notFound = (what: string) => new ApiError(404, 'NOT_FOUND', `${what} does not exist.`)

export const conflict = (code: string, detail: string, headers?: Record<string, string>) =>
  new ApiError(409, code, detail, headers ? { headers } : {})

export const preconditionFailed = (detail: string) => new ApiError(412, 'PRECONDITION_FAILED', detail)

export const unprocessable = (code: string, detail: string, errors?: FieldError[]) =>
  new ApiError(422, code, detail, errors ? { errors } : {})

export const serviceUnavailable = (detail: string) => new ApiError(503, 'SERVICE_UNAVAILABLE', detail)

/** How long a client should wait before retrying a request the database could not serve. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

/** The database is unreachable, its connection died or a statement timed out (decisions §12). */
export const databaseUnavailable = (cause?: unknown) =>
  new ApiError(503, 'DATABASE_UNAVAILABLE', 'The database is unavailable; retry shortly.', {
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
    ...(cause === undefined ? {} : { cause }),
  })
