/**
 * CORS (decisions §12): off unless CORS_ORIGINS is set. Then a browser app on a listed origin (or
 * any, with `*`) may call REST, GraphQL and the contract documents: a preflight is answered 204 in
 * this plugin's onRequest hook, before authentication, rate limiting or routing (a preflight never
 * carries a token), and every response, problems included, carries Access-Control-Allow-Origin
 * with the caller's origin (hence `Vary: Origin`) and exposes the headers a client reads.
 *
 * An OPTIONS that is not a preflight (no Origin or no Access-Control-Request-Method) is left to
 * the router, so it is the same 405/404 problem as with CORS off. No credentials mode: the API
 * authenticates with the Authorization header, never cookies. Registered before every plugin that
 * can answer early, and before problem-json (whose route mirror must not see the catch-all
 * OPTIONS route @fastify/cors adds). It holds no connection: nothing here fails at run time.
 *
 * CORS does not cover WebSockets: a browser opens one to any host and sends its page's Origin.
 * `websocketOriginAllowed` is the same origin list applied to the GraphQL WebSocket upgrade
 * (graphql/plugin.ts refuses it with 403), so that a page on another site cannot use a token it
 * holds against the subscriptions.
 */
import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/** X-Request-Id, traceparent and tracestate: a browser app may name its request and continue its own trace. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  // A fetch() stream reader resuming an event stream as EventSource does (decisions §13).
  'Last-Event-ID',
  // What an MCP client sends after its initialize (the protocol's Streamable HTTP transport), so an
  // agent running in a page can call /mcp (docs/agents.md).
  'Mcp-Protocol-Version',
  'X-Request-Id',
  'traceparent',
  'tracestate',
]
/** X-Request-Id and Server-Timing: what a browser app quotes in a bug report and shows in its devtools. WWW-Authenticate: why a 401 was refused, and where to look. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Server-Timing',
  'ETag',
  'Location',
  'Idempotent-Replayed',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  // The bearer challenge: an MCP client in a page finds the protected-resource metadata there (RFC 9728).
  'WWW-Authenticate',
]
/** Exposed too when they are sent (RATE_LIMIT_LEGACY_HEADERS=true); otherwise they only lengthen every answer. */
export const CORS_EXPOSED_LEGACY_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 h). */
export const CORS_PREFLIGHT_MAX_AGE_SECONDS = 600

export interface CorsOptions {
  /** The configured CORS_ORIGINS; undefined turns CORS off. */
  origins: string[] | '*' | undefined
  /** Whether the legacy RateLimit-Limit/-Remaining/-Reset are sent, and so exposed. */
  legacyRateLimitHeaders: boolean
}

/**
 * Whether a WebSocket upgrade may proceed: always while CORS is off or `*`; else when it carries no
 * Origin (a client that is no browser, which an origin check does not concern), comes from the
 * service's own origin (GraphiQL, Swagger UI: the Host it was sent to), or from a listed origin.
 */
export function websocketOriginAllowed(origins: string[] | '*' | undefined, request: FastifyRequest): boolean {
  const { origin, host } = request.headers
  if (origins === undefined || origins === '*' || origin === undefined || origins.includes(origin)) return true
  try {
    return new URL(origin).host === host
  } catch {
    return false
  }
}

export default fp<CorsOptions>(
  async function corsPlugin(app, options) {
    const { origins } = options
    if (origins === undefined) return
    const allowed: FastifyCorsOptions = {
      // `*` reflects the request's origin too, so ACAO is always "the matching origin".
      origin: origins === '*' ? true : origins,
      methods: CORS_METHODS,
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: options.legacyRateLimitHeaders ? [...CORS_EXPOSED_HEADERS, ...CORS_EXPOSED_LEGACY_HEADERS] : CORS_EXPOSED_HEADERS,
      maxAge: CORS_PREFLIGHT_MAX_AGE_SECONDS,
      credentials: false,
      strictPreflight: true,
    }
    const notCors: FastifyCorsOptions = { origin: false }
    await app.register(cors, {
      hook: 'onRequest',
      // Per request: a plain OPTIONS is no preflight, so CORS steps aside and the router answers
      // it as it does with CORS off.
      delegator: async (request: FastifyRequest) => {
        const preflightLike = request.method === 'OPTIONS'
        const preflight =
          preflightLike && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined
        return preflightLike && !preflight ? notCors : allowed
      },
    })
  },
  { name: 'cors' },
)
