/**
 * GraphQL's part of what a request cost: the operation's name, outcome and points for
 * the request's log line, metrics and Server-Timing (plugins/request-cost.ts), the request id in
 * `extensions.requestId`, and, while tracing is on (plugins/tracing.ts), spans for parse, validate
 * and execute, and one span per loader batch (not per parent: a batch is one query).
 */
import type { Span } from '@opentelemetry/api'
import type { FastifyInstance } from 'fastify'
import { GraphQLScalarType, getOperationAST, type DocumentNode } from 'graphql'
import type { IResolverObject, IResolvers, MercuriusContext } from 'mercurius'
import type { Tracing } from '../plugins/tracing.ts'
import type { LoaderDefinition, LoaderMap } from './resolving/batched-loaders.ts'
import { requestedOperationName } from './limits/executing-operation.ts'

interface OperationSpans {
  parse?: Span
  validate?: Span
  execute?: Span
}

const SPANS = Symbol('graphql spans')
type TracedContext = MercuriusContext & { [SPANS]?: OperationSpans }

function end(span: Span | undefined): void {
  if (span?.isRecording()) span.end()
}

/**
 * Registers the hooks. Call it before the operation limits' hooks, so that an operation the
 * limits refuse is still counted under its name.
 */
export function observeGraphql(app: FastifyInstance): void {
  const tracing = app.tracing
  if (tracing) traceOperations(app, tracing)

  const named = async (_schema: unknown, document: DocumentNode, context: MercuriusContext) => {
    const cost = context.reply?.request.cost
    if (!cost) return
    cost.graphqlOperation = getOperationAST(document, requestedOperationName(context))?.name?.value ?? 'anonymous'
    // Until onResolution says otherwise: a limit refused it.
    cost.graphqlOutcome = 'refused'
  }
  // The limits refuse an operation before its document is validated or before it executes (limits.ts).
  app.graphql.addHook('preValidation', named)
  app.graphql.addHook('preExecution', named)
  app.graphql.addHook('onResolution', async (execution, context) => {
    const request = context.reply?.request
    if (!request) return
    if (request.cost) {
      request.cost.graphqlOutcome = execution.errors?.length ? 'error' : 'ok'
      if (context.cost) request.cost.graphqlCost = context.cost.requestedQueryCost
    }
    ;(execution as { extensions?: Record<string, unknown> }).extensions = { ...execution.extensions, requestId: request.id }
  })
}

function traceOperations(app: FastifyInstance, { tracer, api }: Tracing): void {
  // Spans still open when the response is sent (an operation refused or failed between hooks).
  const open = new WeakMap<object, Span[]>()
  const start = (context: TracedContext, name: 'parse' | 'validate' | 'execute'): Span => {
    const span = tracer.startSpan(`graphql.${name}`, {}, api.context.active())
    ;(context[SPANS] ??= {})[name] = span
    const request = context.reply?.request
    if (request) open.set(request, [...(open.get(request) ?? []), span])
    return span
  }
  app.graphql.addHook('preParsing', async (_schema, _source, context) => {
    start(context, 'parse')
  })
  app.graphql.addHook('preValidation', async (_schema, _document, context: TracedContext) => {
    end(context[SPANS]?.parse)
    start(context, 'validate')
  })
  app.graphql.addHook('preExecution', async (_schema, document, context: TracedContext) => {
    // A document parsed and validated before is taken from Mercurius' cache: no validate span.
    end(context[SPANS]?.parse)
    end(context[SPANS]?.validate)
    start(context, 'execute').setAttribute(
      'graphql.operation.name',
      getOperationAST(document, requestedOperationName(context))?.name?.value ?? 'anonymous',
    )
  })
  app.graphql.addHook('onResolution', async (_execution, context: TracedContext) => {
    end(context[SPANS]?.execute)
  })
  app.addHook('onResponse', (request, _reply, done) => {
    for (const span of open.get(request) ?? []) end(span)
    open.delete(request)
    done()
  })
}

/**
 * Loaders wrapped so that each batch is a span under graphql.execute, and the statements it runs
 * are spans under it. Unchanged while tracing is off.
 */
export function tracedLoaders(app: FastifyInstance, loaders: LoaderMap): LoaderMap {
  const tracing = app.tracing
  if (!tracing) return loaders
  const { tracer, api } = tracing
  const traced: LoaderMap = {}
  for (const [type, fields] of Object.entries(loaders)) {
    const tracedFields: LoaderMap[string] = {}
    traced[type] = tracedFields
    for (const [field, definition] of Object.entries(fields)) {
      const loader: LoaderDefinition['loader'] = typeof definition === 'function' ? definition : definition.loader
      const tracedLoader: LoaderDefinition['loader'] = (queries, context: TracedContext) => {
        const execute = context[SPANS]?.execute
        const parent = execute ? api.trace.setSpan(api.context.active(), execute) : api.context.active()
        return tracer.startActiveSpan(
          `loader ${type}.${field}`,
          { attributes: { 'graphql.loader.batch_size': queries.length } },
          parent,
          async (span) => {
            try {
              return await loader(queries, context)
            } catch (error) {
              span.recordException(error as Error)
              span.setStatus({ code: api.SpanStatusCode.ERROR })
              throw error
            } finally {
              span.end()
            }
          },
        )
      }
      // A parent that carries its answer is not loaded: no batch, so no span.
      tracedFields[field] = typeof definition === 'function' ? tracedLoader : { ...definition, loader: tracedLoader }
    }
  }
  return traced
}

/**
 * Root resolvers (Query, Mutation) run in graphql.execute's context, so that their statements are
 * spans under it rather than under the HTTP handler. Unchanged while tracing is off.
 */
export function tracedResolvers(app: FastifyInstance, resolvers: IResolvers): IResolvers {
  const tracing = app.tracing
  if (!tracing) return resolvers
  const { api } = tracing
  const traced: IResolvers = { ...resolvers }
  for (const type of ['Query', 'Mutation']) {
    const fields = resolvers[type]
    if (!fields || typeof fields !== 'object' || fields instanceof GraphQLScalarType) continue
    const tracedFields: IResolverObject = {}
    traced[type] = tracedFields
    for (const [field, resolve] of Object.entries(fields)) {
      tracedFields[field] =
        typeof resolve !== 'function'
          ? resolve
          : (root, args, context: TracedContext, info) => {
              const execute = context[SPANS]?.execute
              const run = () => resolve(root, args, context, info)
              return execute ? api.context.with(api.trace.setSpan(api.context.active(), execute), run) : run()
            }
    }
  }
  return traced
}
