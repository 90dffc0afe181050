/**
 * Request ids: a caller (a gateway, another service) may name its request with `X-Request-Id` so
 * that one call can be followed through several services' logs; otherwise the service makes one.
 * The id is echoed in the response's `X-Request-Id`, a problem's `requestId`, GraphQL's
 * `extensions.requestId`, and it is on every log line of the request. A sent id is taken only when
 * it is short and plain (it reaches logs and headers): anything else is replaced, not refused.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const REQUEST_ID_HEADER = 'x-request-id'
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** An id the service makes: for a request that sent none, or none that could be read. */
export const freshRequestId = (): string => randomUUID()

/** The id a request is known by: the caller's, when acceptable, else a fresh one. */
export function requestIdOf(request: Pick<IncomingMessage, 'headers'>): string {
  const sent = request.headers[REQUEST_ID_HEADER]
  return typeof sent === 'string' && ACCEPTABLE_REQUEST_ID.test(sent) ? sent : freshRequestId()
}
