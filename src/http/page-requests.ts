/** Whether a request comes from a browser tab that wants a page (decisions §13, "Front doors"). */
import type { FastifyRequest } from 'fastify'

/**
 * A browser's navigation names `text/html` in Accept; an API client (curl, fetch, a generated SDK)
 * names JSON or a wildcard. So a front door sends the first to a page and answers the second in JSON.
 */
export function asksForPage(request: FastifyRequest): boolean {
  return request.headers.accept?.includes('text/html') === true
}
