/**
 * The GraphQL endpoint: Mercurius serving schema.graphql as written (the contract is the SDL
 * file, not code), with the caller from the same bearer token REST uses. A request without a
 * valid credential is 401 before any parsing or execution.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { DocumentNode } from 'graphql'
import mercurius, { type CustomPubSub } from 'mercurius'
import type { Caller } from '../auth/caller.ts'
import type { AppConfig } from '../config.ts'
import { type ApiError, credentialRequired, forbidden, graphqlCodeOf } from '../errors.ts'
import { websocketOriginAllowed } from '../plugins/cors.ts'
import { formatGraphqlErrors, GRAPHQL_RESPONSE_MEDIA_TYPE, wantsGraphqlResponse } from './errors.ts'
import { createMemoryCostBucket, createRedisCostBucket } from './limits/cost-bucket.ts'
import { registerPublicDataCache } from './cache.ts'
import { refuseGetWithoutOperation } from './http/get-operation.ts'
import { enforceSubscriptionLimits, operationLimitHooks } from './limits/limits.ts'
import type { SchemaResolvers } from './resolving/loaders.ts'
import { addEventId } from './subscriptions/event-replay.ts'
import { createBoundedPubSub, SLOW_SUBSCRIBER_CLOSE_CODE } from '../events/pubsub.ts'
import { registerSubscriptionTransport } from './subscriptions/websocket.ts'
import { persistedQueryProvider } from './http/persisted-queries.ts'
import { refuseUnstorableText } from './http/storable-text.ts'
import { missesQuery, refuseMalformedRequests } from './http/request-problems.ts'
import { addGraphqlRouteHooks } from './http/route-hooks.ts'
import { registerGraphiql } from './http/graphiql.ts'
import { refuseNonUtf8GraphqlDocuments } from '../http/utf8-bodies.ts'
import { asksForPage } from '../http/page-requests.ts'
import { observeGraphql, tracedLoaders, tracedResolvers } from './observability.ts'
import { withBatchedLoaders } from './resolving/batched-loaders.ts'
import { boundResponses, boundSubscriptionEvents } from './limits/response-size.ts'
import { deprecatedFieldsOf } from '../plugins/deprecation.ts'

/** Answers an HTTP request to /graphql that is refused before GraphQL sees it, the GraphQL way. */
function refuse(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value)
  if (request.cost) request.cost.errorCode = error.code
  return reply
    .code(error.status)
    .send({ errors: [{ message: error.detail, extensions: { code: graphqlCodeOf(error.code) } }], extensions: { requestId: request.id } })
}

/**
 * A browser tab opening /graphql (a GET for HTML with no query) is sent to GraphiQL, before the
 * credential is asked for: a person who typed the URL wants the explorer (decisions §13, "Front doors").
 */
function redirectBrowserToGraphiql(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (request.method !== 'GET' || !asksForPage(request) || !missesQuery(request.query)) return undefined
  return reply.redirect('/graphiql', 302)
}

function rejectUnauthenticated(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (request.caller) return undefined
  return refuse(request, reply, credentialRequired(request.credentialError))
}

/** A WebSocket upgrade from a page on an origin CORS_ORIGINS does not list: 403, never upgraded. */
function rejectCrossOrigin(origins: AppConfig['corsOrigins'], request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (websocketOriginAllowed(origins, request)) return undefined
  return refuse(
    request,
    reply,
    forbidden(`WebSocket connections from the origin ${request.headers.origin} are not allowed (CORS_ORIGINS).`),
  )
}

export const graphqlPlugin = fp<{ config: AppConfig; sdl: string; schemaResolvers: SchemaResolvers }>(
  async function graphql(app, options) {
    const { resolvers, loaders } = options.schemaResolvers
    const { subscriptions } = options.config
    const sockets = await registerSubscriptionTransport(app, {
      keepAliveMs: subscriptions.keepAliveMs,
      initTimeoutMs: subscriptions.initTimeoutMs,
      closeGraceMs: 2000,
      maxSubscriptionsPerConnection: subscriptions.maxPerConnection,
      maxConnectionsPerCaller: subscriptions.maxConnectionsPerCaller,
      maxSubscriptionsPerCaller: subscriptions.maxPerCaller,
      maxTokens: options.config.graphql.maxTokens,
    })
    // JSON bodies are checked by the app's parser; Mercurius reads application/graphql with its own.
    refuseNonUtf8GraphqlDocuments(app, '/graphql')
    const graphiql = options.config.nodeEnv !== 'production'
    const persistedQueries = persistedQueryProvider(options.config.graphql.persistedOnly, options.config.graphql.persistedManifest)
    // The endpoint's own request checks, on its routes only (route-hooks.ts).
    addGraphqlRouteHooks(app, '/graphql', {
      // Callback-style hooks (no promise per request); a throw is the request's error.
      onRequest: (request, reply, done) => {
        // A WebSocket upgrade authenticates in connection_init (subscriptions check the caller); its
        // Origin is checked here, as CORS would check a request's (plugins/cors.ts).
        const refused =
          request.headers.upgrade?.toLowerCase() === 'websocket'
            ? rejectCrossOrigin(options.config.corsOrigins, request, reply) !== undefined
            : (graphiql && redirectBrowserToGraphiql(request, reply) !== undefined) || rejectUnauthenticated(request, reply) !== undefined
        // A hook that has sent the answer must not call done.
        if (!refused) done()
      },
      preValidation: refuseMalformedRequests(),
      // GraphQL-over-HTTP: a client that asks for the graphql-response media type gets it.
      onSend: (request, reply, payload, done) => {
        if (wantsGraphqlResponse(request.headers.accept)) reply.type(`${GRAPHQL_RESPONSE_MEDIA_TYPE}; charset=utf-8`)
        done(null, payload)
      },
    })
    addGraphqlRouteHooks(app, '/graphql', { preHandler: refuseGetWithoutOperation(persistedQueries) }, ['GET', 'HEAD'])
    await app.register(mercurius, {
      schema: options.sdl,
      // Loaders batch through our own resolvers (batched-loaders.ts), not Mercurius' `loaders`.
      resolvers: tracedResolvers(
        app,
        withBatchedLoaders(resolvers, tracedLoaders(app, loaders), { eventOutageWaitMs: subscriptions.outageWaitMs }),
      ),
      path: '/graphql',
      // Our own GraphiQL page (graphiql.ts) replaces Mercurius', which loads from unpkg.com.
      graphiql: false,
      context: (request) => ({ caller: request.caller as Caller }),
      jit: options.config.graphql.jit,
      // Parsing stops at the token limit (document-tokens.ts): GRAPHQL_PARSE_FAILED.
      graphql: { parseOptions: { maxTokens: options.config.graphql.maxTokens } },
      errorFormatter: formatGraphqlErrors,
      // graphql-transport-ws. Connections are admitted (or refused) in websocket.ts.
      subscription: {
        // Mercurius' CustomPubSub typing asks for an `emitter` it never reads from a custom pubsub and types
        // `queue.close` as a function where Mercurius keeps an array of callbacks (pubsub.ts).
        pubsub: createBoundedPubSub(subscriptions.queueLimit, app.log) as unknown as CustomPubSub,
        // websocket.ts already weighed the upgrade header against connection_init's credential;
        // Mercurius awaits this at connection_init, so a check still under way is waited for.
        context: async (socket) => ({
          caller: await sockets.callerOf(socket),
          closeAsTooSlow: () => socket.close(SLOW_SUBSCRIBER_CLOSE_CODE, 'Subscriber too slow: events were dropped'),
          subscriptionOpen: () => socket.readyState === socket.OPEN,
          admitSubscription: (id: string) => sockets.admitSubscription(socket, id),
          subscriptionRequest: (id: string) => sockets.subscriptionRequest(socket, id),
          subscriptionEventIds: new Map<string, string>(),
        }),
      },
      persistedQueryProvider: persistedQueries,
    })
    if (graphiql) await registerGraphiql(app, '/graphql')
    refuseUnstorableText(app)
    // Before observeGraphql's onResolution: an abandoned response is then counted as refused.
    app.graphql.addHook('onResolution', boundResponses(options.config.graphql.maxResponseBytes))
    app.graphql.addHook('onSubscriptionResolution', boundSubscriptionEvents(options.config.graphql.maxResponseBytes))
    // Each event's message names its id (`extensions.eventId`): the `after` a reconnecting client resumes with.
    app.graphql.addHook('onSubscriptionResolution', addEventId)
    // Before the limits' preExecution hook, so that a refused operation is counted by its name.
    observeGraphql(app)

    // The per-connection subscription limit, before Mercurius keeps anything for the operation.
    app.graphql.addHook('preSubscriptionParsing', async (_schema, _source, context, id) => context.admitSubscription?.(String(id)))
    // Mercurius neither validates a subscription document nor runs preExecution for it.
    app.graphql.addHook('preSubscriptionExecution', enforceSubscriptionLimits(options.config.graphql))

    const { costBucket, costRestoreRate } = options.config.graphql
    const bucket = app.redis
      ? createRedisCostBucket(app.redis, costBucket, costRestoreRate, (error) => app.redisFailedOpen('GraphQL points', error))
      : createMemoryCostBucket(costBucket, costRestoreRate)

    // Depth, cost, the mutation count and the caller's points bucket, before anything executes;
    // the same verdict before graphql validates a document it has not seen.
    const limits = operationLimitHooks(options.config.graphql, bucket)
    app.graphql.addHook('preValidation', limits.preValidation)
    app.graphql.addHook('preExecution', limits.preExecution)
    // After the limits: a refused operation used nothing. The deprecated fields a document selects are
    // found once per parsed document (Mercurius caches documents), then only looked up.
    const deprecatedFields = new WeakMap<DocumentNode, readonly string[]>()
    app.graphql.addHook('preExecution', async (schema, document, context) => {
      let fields = deprecatedFields.get(document)
      if (fields === undefined) {
        fields = deprecatedFieldsOf(schema, document)
        deprecatedFields.set(document, fields)
      }
      if (fields.length > 0) app.deprecation.fieldsUsed(context.reply?.request, fields)
    })
    app.graphql.addHook('onResolution', async (execution, context) => {
      if (context.cost) (execution as { extensions?: Record<string, unknown> }).extensions = { ...execution.extensions, cost: context.cost }
    })

    await registerPublicDataCache(app)
    app.get('/graphql/schema.graphql', async (_request, reply) => reply.type('application/graphql; charset=utf-8').send(options.sdl))
  },
  { name: 'graphql', dependencies: ['auth', 'redis', 'deprecation'] },
)
