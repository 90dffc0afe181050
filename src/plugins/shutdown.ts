/**
 * Shutdown within its grace period (decisions §12, §13): once the app starts closing, every
 * response closes its connection. Node's server.close() waits for every open connection, and a
 * keep-alive one whose request was in flight at SIGTERM would otherwise stay open for its idle
 * timeout (HTTP_KEEP_ALIVE_TIMEOUT) after that request ended. Requests that arrive while closing
 * are Fastify's own: 503, also with `Connection: close`.
 */
import fp from 'fastify-plugin'

export default fp(
  async function shutdown(app) {
    let closing = false
    // Registered before the plugins whose preClose waits for work in flight, so set at once.
    app.addHook('preClose', async () => {
      closing = true
    })
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (closing) reply.header('connection', 'close')
      done(null, payload)
    })
  },
  { name: 'shutdown' },
)
