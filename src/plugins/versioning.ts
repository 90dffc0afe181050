/**
 * Media-type versioning beside the URL version (decisions §10): `Accept:
 * application/vnd.api+json; version=1` is served like application/json; a version this server
 * does not have is 406.
 */
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.ts'

export const SUPPORTED_VERSIONS = new Set(['1'])

export function requestedVersions(accept: string | undefined): string[] {
  if (!accept) return []
  return accept
    .split(',')
    .map((part) => part.trim())
    .filter((part) => /^application\/vnd\.api\+json\b/i.test(part))
    .map((part) => /;\s*version\s*=\s*"?([^";,\s]+)"?/i.exec(part)?.[1] ?? '1')
}

/** Throws the 406 when the request asks only for media-type versions this server does not have. */
export function refuseUnavailableVersion(request: FastifyRequest): void {
  const versions = requestedVersions(request.headers.accept)
  if (versions.length > 0 && !versions.some((version) => SUPPORTED_VERSIONS.has(version))) {
    throw new ApiError('VERSION_NOT_ACCEPTABLE', `API version ${versions.join(', ')} is not available; this server has version 1.`)
  }
}

/**
 * Callback-style, like the other per-request hooks: an async hook costs a promise and a microtask
 * per request, measurable in the bench. Fastify turns a throw into the request's error all the same.
 */
const versionHook: onRequestHookHandler = (request, _reply, done) => {
  refuseUnavailableVersion(request)
  done()
}

export default fp(
  async function versioning(app) {
    // Only the routes under /api/ get the check, as the first of their own hooks (decisions §19):
    // after the app's (auth, rate limit), as when it was app-wide. An unknown path under /api/ is
    // checked by the not-found handler (plugins/problem-json.ts).
    app.addHook('onRoute', (route) => {
      if (route.url.startsWith('/api/')) route.onRequest = [versionHook, ...[route.onRequest ?? []].flat()]
    })
  },
  { name: 'versioning' },
)
