/**
 * RFC 9457 problem+json for every non-2xx answer: our own ApiErrors, Fastify's validation and
 * content-type errors, unknown routes (404) and known paths with the wrong method (405 + Allow).
 * A 5xx never carries a stack, SQL or driver message: it is logged and replaced. The problem body
 * and the error translation live in http/problems.ts, which the contract router's own answers use too.
 */
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { ApiError } from '../errors.ts'
import { sendProblem, toApiError } from '../http/problems.ts'
import { refuseUnavailableVersion } from './versioning.ts'

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
      // Under /api/, a version this server does not have is 406 before anything else, as on the
      // routes there, whose own hook checks it (plugins/versioning.ts).
      if (path.startsWith('/api/')) refuseUnavailableVersion(request)
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
