/**
 * Request-level GraphQL problems (decisions §12): a POST body that is not one GraphQL request —
 * malformed JSON, no or a non-JSON Content-Type, a JSON array, no or a non-string `query`, a
 * non-object `variables`, `__proto__` in the JSON, a body over 1 MiB, a persisted-query hash that
 * does not match its query, a `Read-After-LSN` that is no WAL position — is 400 `BAD_REQUEST`, never INTERNAL_SERVER_ERROR, and is logged
 * below error level. Mercurius reads the body before our resolvers exist, so some of these reach
 * it as Fastify or Mercurius errors (mapped by `requestProblem`); the shape of the body is checked
 * here before Mercurius' own schema sees it, so that each problem gets a message that names it.
 * The document text itself, of a POST or a GET, is looked at here too, before Mercurius parses it:
 * an empty one or one nested too deeply is GRAPHQL_PARSE_FAILED (documentTextProblem).
 */
import type { FastifyRequest } from 'fastify'
import { GraphQLError, parse } from 'graphql'
import { ApiError } from '../../errors.ts'
import { READ_AFTER_HEADER, readAfterProblem } from '../../plugins/read-your-writes.ts'
import { nestingProblem } from '../limits/document-nesting.ts'

export const badGraphqlRequest = (detail: string) => new ApiError('BAD_REQUEST', detail)

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** What is wrong with a parsed POST body as a GraphQL-over-HTTP request, or undefined. */
export function requestShapeProblem(body: unknown): string | undefined {
  if (!isObject(body)) return 'The body must be one JSON object with a "query" (batched requests are not accepted).'
  const { query, variables, operationName, extensions } = body
  if (extensions !== undefined && extensions !== null && !isObject(extensions)) return '"extensions" must be an object.'
  const persisted = isObject(extensions) && extensions.persistedQuery !== undefined
  if (query === undefined && !persisted) return 'The body has no "query".'
  if (query !== undefined && typeof query !== 'string') return '"query" must be a string.'
  if (variables !== undefined && variables !== null && !isObject(variables)) return '"variables" must be an object.'
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return '"operationName" must be a string.'
  return undefined
}

/**
 * Fastify and Mercurius errors that mean the request itself was malformed, by their code, with
 * what a client is told: all BAD_REQUEST on /graphql, where GraphQL-over-HTTP answers 400 for a
 * request that is not one GraphQL request (REST maps the same Fastify codes in http/problems.ts).
 */
export const MALFORMED_GRAPHQL_REQUESTS: Readonly<Record<string, string>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is larger than 1 MiB.',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Send the request as application/json (or a GET with a query string).',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The body is not valid JSON.',
  FST_ERR_CTP_INVALID_JSON_BODY: 'The body is not valid JSON.',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'The body is not valid JSON.',
  MER_ERR_GQL_PERSISTED_QUERY_MISMATCH: 'The persisted query hash does not match the query sent with it.',
}

/** Fastify and Mercurius errors that mean the request itself was malformed, as BAD_REQUEST. */
export function requestProblem(error: unknown): ApiError | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, statusCode, validation } = error as { code?: unknown; statusCode?: unknown; validation?: unknown }
  const known = typeof code === 'string' && Object.hasOwn(MALFORMED_GRAPHQL_REQUESTS, code) ? MALFORMED_GRAPHQL_REQUESTS[code] : undefined
  if (known !== undefined) return badGraphqlRequest(known)
  // JSON.parse's own errors, and secure-json-parse refusing `__proto__` or `constructor.prototype`.
  if (error instanceof SyntaxError && (statusCode === 400 || code === 'MER_ERR_GQL_VALIDATION')) {
    return badGraphqlRequest(`The request is not valid JSON: ${error.message}`)
  }
  // Mercurius' own schema of the request body (only reached by shapes the hook above lets pass).
  if (validation !== undefined) return badGraphqlRequest(`The request is malformed: ${(error as Error).message}`)
  return undefined
}

/** Whether `extensions` (an object in a POST body, JSON text in a GET's query string) names a persisted query by its hash. */
function namesPersistedQuery(extensions: unknown): boolean {
  let parsed = extensions
  if (typeof extensions === 'string') {
    try {
      parsed = JSON.parse(extensions)
    } catch {
      return false
    }
  }
  return isObject(parsed) && parsed.persistedQuery !== undefined
}

export const MISSING_GET_QUERY =
  'The request has no "query" parameter: send the GraphQL document as ?query=… (or POST it as JSON). A browser is sent to GraphiQL at /graphiql.'

/** Whether a GET's query string carries neither a document nor a persisted query's hash. */
export function missesQuery(parameters: unknown): boolean {
  return !isObject(parameters) || (parameters.query === undefined && !namesPersistedQuery(parameters.extensions))
}

/** How many document texts the nesting verdict is remembered for, per app. */
export const NESTING_VERDICTS_KEPT = 512

/** Texts longer than this are scanned on every request: keeping them would cost more memory than their scan costs time. */
export const NESTING_VERDICT_MAX_LENGTH = 8192

/**
 * The nesting scan (document-nesting.ts), remembered for the texts that passed it, the least
 * recently used going first: a client sends the same few documents again and again, and looking a
 * text up costs a small part of scanning it (measured: about a thirtieth for the 73 characters of
 * the bench's `orders(first: 50)` document, a third for a 2,500-character one). Refused texts are
 * not kept.
 */
function nestingVerdicts(): (text: string) => GraphQLError | undefined {
  const passed = new Map<string, true>()
  return (text) => {
    if (text.length > NESTING_VERDICT_MAX_LENGTH) return nestingProblem(text)
    if (passed.delete(text)) {
      passed.set(text, true)
      return undefined
    }
    const problem = nestingProblem(text)
    if (problem) return problem
    if (passed.size >= NESTING_VERDICTS_KEPT) {
      const oldest = passed.keys().next()
      if (oldest.done !== true) passed.delete(oldest.value)
    }
    passed.set(text, true)
    return undefined
  }
}

/**
 * graphql's syntax error for a document text graphql-js is not to be given, or undefined:
 * - an empty `query` is a document without a definition, so one that does not parse
 *   (GRAPHQL_PARSE_FAILED, as graphql-http's reference handler answers it). Mercurius would take
 *   it for no query at all and answer "unknown persisted query". A request that names a persisted
 *   query by its hash is that query's, whatever `query` says;
 * - a document nesting too deeply for graphql-js's recursive parser (document-nesting.ts).
 */
function documentTextProblem(parameters: unknown, nesting: (text: string) => GraphQLError | undefined): GraphQLError | undefined {
  if (!isObject(parameters) || typeof parameters.query !== 'string') return undefined
  if (parameters.query === '' && !namesPersistedQuery(parameters.extensions)) {
    try {
      parse('')
    } catch (error) {
      if (error instanceof GraphQLError) return error
      throw error
    }
  }
  return nesting(parameters.query)
}

/** The endpoint's preValidation hook (a route hook: route-hooks.ts), with its own memory of texts (one per app). */
export function refuseMalformedRequests() {
  const nesting = nestingVerdicts()
  return async function refuseMalformedRequest(request: FastifyRequest): Promise<void> {
    if (request.method === 'POST') {
      const problem = requestShapeProblem(request.body)
      if (problem) throw badGraphqlRequest(problem)
      // GraphQL-over-HTTP: `"extensions": null` means no extensions (Mercurius' schema wants an object).
      const body = request.body
      if (isObject(body) && body.extensions === null) delete body.extensions
    } else if (request.headers.upgrade?.toLowerCase() !== 'websocket' && missesQuery(request.query)) {
      // A GET (not a WebSocket upgrade) without a document or a persisted query's hash: say so
      // (Mercurius would answer PERSISTED_QUERY_NOT_FOUND "Unknown query", as if a hash had been sent).
      throw badGraphqlRequest(MISSING_GET_QUERY)
    }
    // A malformed read position is refused, as REST refuses it on a read (decisions §15), with or without replicas.
    const readAfter = readAfterProblem(request.headers[READ_AFTER_HEADER])
    if (readAfter) throw badGraphqlRequest(readAfter)
    // A POST's body, a GET's (or HEAD's) query string.
    const unparsable = documentTextProblem(request.method === 'POST' ? request.body : request.query, nesting)
    if (unparsable) throw unparsable
  }
}
