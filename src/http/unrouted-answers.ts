/**
 * Answers sent outside Fastify's request lifecycle, where no hook runs, carrying what every other
 * answer carries (decisions §12): the API's security headers, an X-Request-Id and a problem+json
 * body with a catalogue code.
 *
 * - Router errors (Fastify's `frameworkErrors`): a path the router cannot decode (`%zz`, 400
 *   INVALID_URL) or whose parameter is longer than it takes (414 URI_TOO_LONG). The request was
 *   read, so its caller is known: it is counted against that caller's rate limit and the answer
 *   carries the RateLimit fields, like the answer of any route.
 * - Node's own refusals (Fastify's `clientErrorHandler`): a request line or header that is not
 *   HTTP (400 MALFORMED_REQUEST), headers over Node's limit (431 HEADERS_TOO_LARGE), a request not
 *   received in time (408 REQUEST_TIMEOUT). No request exists, so the answer is written whole to
 *   the socket and the connection closed. It carries no RateLimit fields and counts against no
 *   budget: no caller was read (its headers are what failed), and each such answer costs the
 *   client its connection, which bounds how often it can be had.
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.ts'
import { problemFromError, sendProblem, toApiError } from './problems.ts'
import { freshRequestId, REQUEST_ID_HEADER } from './request-id.ts'

/**
 * Fastify's `frameworkErrors`: does for a request the router refused what the app's onRequest
 * hooks do for every other one (security headers, request id, the caller and its rate limit), then
 * answers its error. It never rejects: Fastify would not hear of it.
 */
export async function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const app = request.server
  reply.headers(app.apiSecurityHeaders)
  reply.header(REQUEST_ID_HEADER, request.id)
  await app.identifyCaller(request)
  let answer = toApiError(error)
  try {
    await app.countRequest(request, reply)
  } catch (refusal) {
    answer = toApiError(refusal)
  }
  sendProblem(reply, answer)
}

/** Node's client errors, by their code, as the catalogue error each stands for; anything else is 400. */
function clientErrorAnswer(code: string): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('HEADERS_TOO_LARGE', 'The request line and headers are larger than this server accepts.')
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('PAYLOAD_TOO_LARGE', 'The chunk extensions of the body are larger than this server accepts.')
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT', 'The request was not received in time; the connection is closed.')
    default:
      return new ApiError('MALFORMED_REQUEST', 'The request is not valid HTTP/1.1.')
  }
}

/** Header lines as written on the wire, from a header object (helmet's values are strings). */
function headerLines(headers: Readonly<Record<string, string | number | readonly string[] | undefined>>): string[] {
  return Object.entries(headers).flatMap(([name, value]) =>
    value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((one) => `${name}: ${one}`),
  )
}

/**
 * Fastify's `clientErrorHandler` (bound to the app): the whole answer, written to the socket as
 * Node's and Fastify's own handlers write theirs, then the connection is destroyed.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const answer = clientErrorAnswer(error.code ?? '')
  const requestId = freshRequestId()
  const body = JSON.stringify(problemFromError(answer, { id: requestId }))
  const head = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`,
    `date: ${new Date().toUTCString()}`,
    ...headerLines(this.apiSecurityHeaders),
    `${REQUEST_ID_HEADER}: ${requestId}`,
    'content-type: application/problem+json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ]
  this.log.info(
    { requestId, status: answer.status, code: answer.code, reason: error.code },
    'client error: answered before the request was read',
  )
  if (socket.writable) socket.write(`${head.join('\r\n')}\r\n\r\n${body}`)
  socket.destroy(error)
}
