/**
 * Shutdown within its grace period (decisions §12, §13), in two steps behind a load balancer:
 *
 * 1. Draining (`app.startDraining()`, on SIGTERM, for SHUTDOWN_DRAIN): `/readyz` answers 503, so
 *    the balancer stops sending new requests here, while every request it still sends is served
 *    as usual; each response closes its connection, so that kept-alive connections move to the
 *    other instances rather than carry a request into the close.
 * 2. Closing (`app.close()`): in-flight requests finish; every response closes its connection
 *    (Node's server.close() waits for every open connection, and a keep-alive one whose request
 *    was in flight would otherwise stay open for its idle timeout, HTTP_KEEP_ALIVE_TIMEOUT);
 *    WebSockets close with 1001 (graphql/subscriptions/websocket.ts). A request that still arrives
 *    on a connection left open (one whose request had begun when closing started) is answered the
 *    catalogue's 503 SERVICE_UNAVAILABLE with Retry-After and `Connection: close`, through its
 *    route's own hooks like any other answer (decisions §19), not Fastify's bare 503
 *    (`return503OnClosing` is off in app.ts).
 */
import type { onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.ts'

/** Seconds a client refused by a closing instance waits: by then the balancer sends it elsewhere. */
const CLOSING_RETRY_AFTER_SECONDS = '1'

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts draining: readiness turns 503, responses close their connections. */
    startDraining(): void
    /** Whether draining started (or the app is closing). */
    readonly draining: boolean
  }
}

export default fp(
  async function shutdown(app) {
    let draining = false
    app.decorate('startDraining', () => {
      if (!draining) app.log.info('draining: /readyz answers 503 from now on')
      draining = true
    })
    app.decorate('draining', {
      getter: () => draining,
    })
    // Fastify's closing state, which it does not expose: set as closing starts (its preClose).
    let closing = false
    // Registered before the plugins whose preClose waits for work in flight, so set at once.
    app.addHook('preClose', async () => {
      draining = true
      closing = true
    })
    // The first of each route's own hooks, after the app's (security headers, request id, CORS),
    // so the refusal carries every header an answer carries.
    const refuseWhileClosing: onRequestHookHandler = (_request, _reply, done) => {
      done(
        closing
          ? new ApiError('SERVICE_UNAVAILABLE', 'This instance is shutting down; retry on another.', {
              headers: { 'retry-after': CLOSING_RETRY_AFTER_SECONDS },
            })
          : undefined,
      )
    }
    app.addHook('onRoute', (route) => {
      route.onRequest = [refuseWhileClosing, ...[route.onRequest ?? []].flat()]
    })
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (draining) reply.header('connection', 'close')
      done(null, payload)
    })
  },
  { name: 'shutdown' },
)
