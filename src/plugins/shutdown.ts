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
 *    WebSockets close with 1001 (graphql/subscriptions/websocket.ts). Requests that arrive on a connection
 *    still open are Fastify's own 503, also with `Connection: close`.
 */
import fp from 'fastify-plugin'

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
    // Registered before the plugins whose preClose waits for work in flight, so set at once.
    app.addHook('preClose', async () => {
      draining = true
    })
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (draining) reply.header('connection', 'close')
      done(null, payload)
    })
  },
  { name: 'shutdown' },
)
