/**
 * What each request cost, measured once and reported three ways:
 *   - on the response: `X-Request-Id`, and `Server-Timing` with the database time and statement
 *     count, the total time and, for GraphQL, the points charged;
 *   - in the log: exactly one line per request (Fastify's own request/response lines are off);
 *   - to the metrics plugin, which reads `request.cost` when the response is sent.
 *
 * Statements are counted where they run: the database layer reports every statement
 * (`observeQueries`, pg and PGlite alike), and an AsyncLocalStorage entered for each request tells
 * which request it belongs to. Background work (the outbox relay, pruning) belongs to none.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { redactCredentials } from '../http/redact-credentials.ts'
import { REQUEST_ID_HEADER } from '../http/request-id.ts'

export interface RequestCost {
  /** SQL statements this request ran (each transaction's begin and commit included). */
  statements: number
  /** Time spent waiting for them, in ms. */
  dbMs: number
  /** GraphQL: the points charged to the caller's bucket, when the operation was metered. */
  graphqlCost?: number
  /** GraphQL: the operation's name as counted in metrics (see graphql/observability.ts). */
  graphqlOperation?: string
  /** GraphQL: ok (executed, no error), error (executed with errors) or refused (never executed). */
  graphqlOutcome?: 'ok' | 'error' | 'refused'
  /** The stable code of the error the response reports, if any. */
  errorCode?: string
  /** GraphQL: every error's code, and its reason when it has one (IDEMPOTENCY_KEY_REUSED…). */
  graphqlErrorCodes?: string[]
}

/** Told of each answered request, once its cost is final (the metrics plugin). */
export type AnsweredRequestObserver = (request: FastifyRequest, reply: FastifyReply) => void

declare module 'fastify' {
  interface FastifyRequest {
    cost: RequestCost
  }
  interface FastifyInstance {
    /**
     * Has `observer` told of every answered request, from this plugin's one onResponse hook
     * (decisions §19): one hook per request for the log line and the metrics, not one each.
     */
    observeAnsweredRequests(observer: AnsweredRequestObserver): void
  }
}

/** The route as logs and metrics name it: its operationId, else its pattern; never the raw URL. */
export function routeName(request: FastifyRequest): string {
  const config = request.routeOptions.config as { operationId?: string } | undefined
  if (config?.operationId) return config.operationId
  // The not-found handler has no URL pattern: every unknown path is one label.
  return request.is404 || request.routeOptions.url === undefined ? 'unmatched' : request.routeOptions.url
}

const round = (ms: number) => Math.round(ms * 100) / 100

export function serverTiming(cost: RequestCost, totalMs: number): string {
  const parts = [
    `db;dur=${round(cost.dbMs)};desc="${cost.statements} statement${cost.statements === 1 ? '' : 's'}"`,
    `total;dur=${round(totalMs)}`,
  ]
  if (cost.graphqlCost !== undefined) parts.push(`cost;desc="${cost.graphqlCost} points"`)
  return parts.join(', ')
}

function logLine(request: FastifyRequest, reply: FastifyReply): void {
  const status = reply.statusCode
  // Nothing is built for a line the level would drop (the probes' and /metrics' warn, LOG_LEVEL).
  if (!(request.log as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled(status >= 500 ? 'error' : 'info'))
    return
  const { cost } = request
  const line = {
    method: request.method,
    route: routeName(request),
    // The URL with any credential-like parameter's value redacted (http/redact-credentials.ts).
    url: redactCredentials(request.url),
    status,
    durationMs: round(reply.elapsedTime),
    statements: cost.statements,
    dbMs: round(cost.dbMs),
    // The token's subject, never the token.
    caller: request.caller?.subject,
    ...(cost.errorCode ? { code: cost.errorCode } : {}),
    ...(cost.graphqlOperation
      ? { graphql: { operation: cost.graphqlOperation, outcome: cost.graphqlOutcome, cost: cost.graphqlCost } }
      : {}),
  }
  // A client's mistake (4xx) is not the service's error.
  if (status >= 500) request.log.error(line, 'request completed')
  else request.log.info(line, 'request completed')
}

export default fp(
  async function requestCost(app) {
    const current = new AsyncLocalStorage<RequestCost>()
    // Declared without a value (Fastify's idiom for a per-request object): onRequest sets it before
    // anything reads it, so readers need no null check.
    app.decorateRequest('cost')

    const stopObserving = app.database.observeQueries((event) => {
      const cost = current.getStore()
      if (!cost) return
      cost.statements++
      cost.dbMs += event.queryDurationMillis
    })
    app.addHook('onClose', async () => stopObserving())

    // Callback-style, so that the rest of the request runs inside the store…
    app.addHook('onRequest', (request, _reply, done) => {
      request.cost = { statements: 0, dbMs: 0 }
      current.run(request.cost, done)
    })
    // …and entered again before the handler when reading a body resumed in the stream's own
    // context (a request without a body is still inside it: nothing to enter). Fastify reads no
    // body for GET and HEAD, so only the routes of the other methods get this hook (decisions §19),
    // as the first of their own: after the app's preHandler hooks, as when it was app-wide.
    const reenter: preHandlerHookHandler = (request, _reply, done) => {
      if (current.getStore() === request.cost) done()
      else current.run(request.cost, done)
    }
    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat()
      if (methods.some((method) => method !== 'GET' && method !== 'HEAD')) route.preHandler = [reenter, ...[route.preHandler ?? []].flat()]
    })

    // Callback-style (no promise per request).
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header(REQUEST_ID_HEADER, request.id)
      // Requests that fail before onRequest (a malformed URL, a timeout) have no cost record.
      if (request.cost) reply.header('server-timing', serverTiming(request.cost, reply.elapsedTime))
      done(null, payload)
    })

    const observers: AnsweredRequestObserver[] = []
    app.decorate('observeAnsweredRequests', (observer: AnsweredRequestObserver) => {
      observers.push(observer)
    })
    app.addHook('onResponse', (request, reply, done) => {
      if (!request.cost) request.cost = { statements: 0, dbMs: 0 }
      logLine(request, reply)
      for (const observer of observers) observer(request, reply)
      done()
    })
  },
  { name: 'request-cost', dependencies: ['db'] },
)
