/**
 * OpenTelemetry traces (issue 15), off unless configured (config.ts `tracing`) or handed a span
 * exporter (tests). While off, this plugin loads no OpenTelemetry module (they are imported
 * dynamically below, and elsewhere only as types) and adds no hook: tracing costs nothing.
 *
 * While on, a request is traced as:
 *   request (@fastify/otel, the official Fastify instrumentation) › handler
 *     › graphql.parse, graphql.validate, graphql.execute (Mercurius hooks, graphql/observability.ts)
 *       › loader Type.field, one per batch (graphql/observability.ts)
 *         › one span per SQL statement
 * SQL spans are made here, from the database layer's statement log (`observeQueries`), rather
 * than by @opentelemetry/instrumentation-pg: that patches `pg` through require hooks, which do not
 * see this ESM service's import of it, and PGlite is not pg at all. One place covers both
 * databases. A statement outside any traced request (the outbox relay) makes no span.
 *
 * The tracer provider belongs to this app (two apps in one process trace apart); the context
 * manager and the W3C propagator are registered globally once, as the OpenTelemetry API requires.
 */
import type { Tracer } from '@opentelemetry/api'
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import fp from 'fastify-plugin'
import type { AppConfig } from '../config.ts'

export interface Tracing {
  tracer: Tracer
  /** The OpenTelemetry API, loaded only when tracing is on. */
  api: typeof import('@opentelemetry/api')
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
      spanProcessors: [processor],
    })
    const tracer = provider.getTracer(INSTRUMENTATION_NAME)
    app.decorate('tracing', { tracer, api })

    // The request span and a handler span under it; a span per lifecycle hook would cost more
    // than it tells.
    const instrumentation = new FastifyOtelInstrumentation({ instrumentHooks: false })
    instrumentation.setTracerProvider(provider)
    await app.register(instrumentation.plugin())

    const stopObserving = app.database.observeQueries((event) => {
      const parent = api.trace.getSpan(api.context.active())
      if (!parent) return
      const end = Date.now()
      const sql = event.query.sql
      const span = tracer.startSpan(
        operationOf(sql),
        {
          kind: api.SpanKind.CLIENT,
          startTime: end - event.queryDurationMillis,
          attributes: { 'db.system.name': 'postgresql', 'db.query.text': sql, 'db.operation.name': operationOf(sql) },
        },
        api.context.active(),
      )
      if (event.level === 'error') {
        span.recordException(event.error as Error)
        span.setStatus({ code: api.SpanStatusCode.ERROR })
      }
      span.end(end)
    })
    app.addHook('onClose', async () => {
      stopObserving()
      await provider.shutdown()
    })
  },
  { name: 'tracing', dependencies: ['db'] },
)
