/**
 * OpenTelemetry traces, off unless configured (config.ts `tracing`) or handed a span
 * exporter (tests). While off, this plugin loads no OpenTelemetry module (they are imported
 * dynamically below, and elsewhere only as types) and adds no hook: tracing costs nothing.
 *
 * While on, a request is traced as:
 *   `GET /api/v1/orders/{id}` (@fastify/otel, the official Fastify instrumentation; named by method
 *   and route template, OpenTelemetry's HTTP conventions) › `handler getOrder` (the operationId;
 *   `handler /graphql` for GraphQL)
 *     › graphql.parse, graphql.validate, graphql.execute (Mercurius hooks, graphql/observability.ts)
 *       › loader Type.field, one per batch (graphql/observability.ts)
 *         › one span per SQL statement
 * SQL spans are made here, from the database layer's statement log (`observeQueries`), rather
 * than by @opentelemetry/instrumentation-pg: that patches `pg` through require hooks, which do not
 * see this ESM service's import of it, and PGlite is not pg at all. One place covers both
 * databases.
 *
 * What an operator reads is kept to what the service means: no span name or attribute carries a
 * file path or source text (@fastify/otel names a handler after its function or its plugin, which
 * for an anonymous one is the minified source or the file it came from), and a 4xx is the
 * caller's mistake, not the service's: the server span (and the handler's, whose error became
 * that 4xx) is left unset, as the HTTP conventions say, and carries no exception event
 * (`httpStatusConventions`).
 *
 * Background work (the outbox relay, housekeeping: events/plugin.ts; webhook delivery passes:
 * modules/webhooks/webhooks.plugin.ts) runs through `background`,
 * outside any request's trace even when a request's write woke it (on PGlite, NOTIFY is delivered
 * in-process, in the writer's context). A pass that did something is a root span of its own with
 * its statements under it; an idle pass (the relay polls every second) leaves nothing.
 *
 * Log lines carry `trace_id` and `span_id` of the active span (`traceLogFields`, the logger's mixin,
 * set by buildApp only while tracing is on).
 *
 * The tracer provider belongs to this app (two apps in one process trace apart); the context
 * manager and the W3C propagator are registered globally once, as the OpenTelemetry API requires.
 */
import type { Context, Tracer } from '@opentelemetry/api'
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { LogEvent } from 'kysely'
import type { AppConfig } from '../config.ts'
import type { RunInBackground } from '../events/background.ts'

type OpenTelemetryApi = typeof import('@opentelemetry/api')

export interface Tracing {
  tracer: Tracer
  /** The OpenTelemetry API, loaded only when tracing is on. */
  api: OpenTelemetryApi
  background: RunInBackground
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Undefined while tracing is off. */
    tracing: Tracing | undefined
  }
}

export interface TracingOptions {
  config: AppConfig['tracing']
  /** Where spans go instead of the configured exporter (tests: an InMemorySpanExporter). */
  spanExporter?: SpanExporter | undefined
}

const INSTRUMENTATION_NAME = 'contract-api'

/** `select`, `insert`… : the statement's operation, for the span name. */
function operationOf(sql: string): string {
  return /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL'
}

/** Fastify's `/api/v1/orders/:id` as the contract writes it, `/api/v1/orders/{id}`. */
export function routeTemplate(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}')
}

/** The operationId of a REST route, else its template; undefined for the not-found handler. */
function routeLabel(request: FastifyRequest): string | undefined {
  const { url, config } = request.routeOptions
  if (request.is404 || url === undefined) return undefined
  return config?.operationId ?? routeTemplate(url)
}

/**
 * `trace_id` and `span_id` of the active span, for every log line (pino's mixin). Only installed
 * while tracing is on: reading the active context is a cost the untraced path does not pay.
 */
export function traceLogFields(api: OpenTelemetryApi): () => Record<string, string> {
  return (): Record<string, string> => {
    const span = api.trace.getSpan(api.context.active())
    if (!span) return {}
    const { traceId, spanId } = span.spanContext()
    return { trace_id: traceId, span_id: spanId }
  }
}

/** Handler spans waiting for their request's status, at most (beyond, the oldest goes on as it is). */
const MAX_HELD_HANDLER_SPANS = 1000

/**
 * OpenTelemetry's HTTP conventions for span status, applied to what `next` (the exporting
 * processor) receives: @fastify/otel marks the request span ERROR for any error a handler threw,
 * whatever the answer, and the handler's span too. A 4xx is the caller's mistake: the server span
 * is handed on unset, and so is the span of a handler whose error became that 4xx, both without
 * their exception events (a stack trace of the service's files). A 5xx keeps its ERROR and its
 * exception. A handler's span ends before the answer's status is known, so one that ended in
 * error is held until its request's span ends (just after, as the answer is sent).
 */
function httpStatusConventions(api: OpenTelemetryApi, next: SpanProcessor): SpanProcessor {
  const EXCEPTION = 'exception'
  const isError = (span: ReadableSpan) => span.status.code === api.SpanStatusCode.ERROR
  // The API has no way back from ERROR (setStatus ignores UNSET): the exporter gets a copy.
  const unset = (span: ReadableSpan): ReadableSpan => ({
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: api.SpanStatusCode.UNSET },
    attributes: span.attributes,
    links: span.links,
    events: span.events.filter((event) => event.name !== EXCEPTION),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  })
  /** Failed handler spans by their request span's id. */
  const held = new Map<string, ReadableSpan[]>()
  const release = (requestSpanId: string, clientError: boolean) => {
    for (const span of held.get(requestSpanId) ?? []) next.onEnd(clientError ? unset(span) : span)
    held.delete(requestSpanId)
  }
  return {
    onStart: (span, context) => next.onStart(span, context),
    onEnd(span) {
      const parent = span.parentSpanContext?.spanId
      if (parent !== undefined && isError(span) && span.attributes['fastify.type'] === 'request-handler') {
        held.set(parent, [...(held.get(parent) ?? []), span])
        const oldest = held.size > MAX_HELD_HANDLER_SPANS ? held.keys().next().value : undefined
        if (oldest !== undefined) release(oldest, false)
        return
      }
      const status = span.attributes['http.response.status_code']
      if (typeof status !== 'number') {
        next.onEnd(span)
        return
      }
      const clientError = status < 500
      release(span.spanContext().spanId, clientError)
      next.onEnd(clientError && isError(span) ? unset(span) : span)
    },
    forceFlush: () => {
      for (const requestSpanId of [...held.keys()]) release(requestSpanId, false)
      return next.forceFlush()
    },
    shutdown: () => {
      for (const requestSpanId of [...held.keys()]) release(requestSpanId, false)
      return next.shutdown()
    },
  }
}

export default fp<TracingOptions>(
  async function tracing(app, options) {
    const exporterKind = options.spanExporter ? 'given' : options.config.exporter
    if (!exporterKind) {
      app.decorate('tracing', undefined)
      return
    }
    const api = await import('@opentelemetry/api')
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks')
    const { W3CTraceContextPropagator } = await import('@opentelemetry/core')
    const { resourceFromAttributes } = await import('@opentelemetry/resources')
    const { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor } = await import(
      '@opentelemetry/sdk-trace-base'
    )
    const { FastifyOtelInstrumentation } = await import('@fastify/otel')

    // Refused (and left to the one registered) when another app in this process registered first.
    const contextManager = new AsyncLocalStorageContextManager().enable()
    if (!api.context.setGlobalContextManager(contextManager)) contextManager.disable()
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator())

    let processor: SpanProcessor
    if (options.spanExporter) processor = new SimpleSpanProcessor(options.spanExporter)
    else if (exporterKind === 'console') processor = new SimpleSpanProcessor(new ConsoleSpanExporter())
    else {
      // Reads the standard OTEL_EXPORTER_OTLP_* variables (endpoint, headers, timeout) itself.
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
      processor = new BatchSpanProcessor(new OTLPTraceExporter())
    }
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.config.serviceName }),
      spanProcessors: [httpStatusConventions(api, processor)],
    })
    const tracer = provider.getTracer(INSTRUMENTATION_NAME)

    const statementSpan = (event: LogEvent, end: number, parent: Context) => {
      const sql = event.query.sql
      const span = tracer.startSpan(
        operationOf(sql),
        {
          kind: api.SpanKind.CLIENT,
          startTime: end - event.queryDurationMillis,
          attributes: { 'db.system.name': 'postgresql', 'db.query.text': sql, 'db.operation.name': operationOf(sql) },
        },
        parent,
      )
      if (event.level === 'error') {
        span.recordException(event.error as Error)
        span.setStatus({ code: api.SpanStatusCode.ERROR })
      }
      span.end(end)
    }

    /** Where background work's statements wait until the pass knows whether it is worth a span. */
    const BACKGROUND_STATEMENTS = api.createContextKey('background statements')
    interface HeldStatement {
      event: LogEvent
      end: number
    }
    const background: RunInBackground = async (name, work) => {
      const held: HeldStatement[] = []
      const startTime = Date.now()
      const outcome = await api.context.with(api.ROOT_CONTEXT.setValue(BACKGROUND_STATEMENTS, held), work)
      if (!outcome) return
      const span = tracer.startSpan(name, { root: true, startTime, attributes: outcome.attributes ?? {} }, api.ROOT_CONTEXT)
      const parent = api.trace.setSpan(api.ROOT_CONTEXT, span)
      for (const { event, end } of held) statementSpan(event, end, parent)
      if (outcome.error !== undefined) {
        span.recordException(outcome.error as Error)
        span.setStatus({ code: api.SpanStatusCode.ERROR })
      }
      span.end()
    }
    app.decorate('tracing', { tracer, api, background })

    // The request span and a handler span under it; a span per lifecycle hook would cost more
    // than it tells.
    const instrumentation = new FastifyOtelInstrumentation({
      instrumentHooks: false,
      // Routing is done by onRequest, where the request span starts: its name and http.route are
      // the route's template, as the contract writes it; a path no route matched is the method alone.
      requestHook: (span, request) => {
        // url.path is the path alone: @fastify/otel puts the query string in it, and with it any
        // credential a caller sent there (the logs redact those: http/redact-credentials.ts).
        const query = request.url.indexOf('?')
        if (query !== -1) span.setAttribute('url.path', request.url.slice(0, query))
        const url = request.is404 ? undefined : request.routeOptions.url
        if (url === undefined) {
          span.updateName(request.method)
          return
        }
        const route = routeTemplate(url)
        span.updateName(`${request.method} ${route}`)
        span.setAttribute('http.route', route)
      },
      // The handler's span (and the not-found handler's): named after the operation, not after the
      // function or plugin that implements it.
      lifecycleHook: (span, { hookName, request }) => {
        const label = routeLabel(request) ?? 'unmatched'
        span.updateName(`${hookName} ${label}`)
        span.setAttributes({ 'hook.name': hookName, 'hook.callback.name': label })
        if (request.routeOptions.url !== undefined) span.setAttribute('http.route', routeTemplate(request.routeOptions.url))
      },
    })
    instrumentation.setTracerProvider(provider)
    await app.register(instrumentation.plugin())

    const stopObserving = app.database.observeQueries((event) => {
      const active = api.context.active()
      if (api.trace.getSpan(active)) {
        statementSpan(event, Date.now(), active)
        return
      }
      // Outside any request or background pass (a statement at startup): no span.
      ;(active.getValue(BACKGROUND_STATEMENTS) as HeldStatement[] | undefined)?.push({ event, end: Date.now() })
    })
    app.addHook('onClose', async () => {
      stopObserving()
      await provider.shutdown()
    })
  },
  { name: 'tracing', dependencies: ['db'] },
)
