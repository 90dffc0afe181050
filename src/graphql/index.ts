/**
 * The GraphQL endpoint: Mercurius serving schema.graphql as written (the contract is the SDL
 * file, not code), with the caller from the same bearer token REST uses. A request without a
 * valid credential is 401 before any parsing or execution.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { readFileSync } from 'node:fs'
import mercurius, { type CustomPubSub, type PersistedQueryProvider } from 'mercurius'
import type { Caller } from '../auth/caller.ts'
import type { AppConfig } from '../config.ts'
import { ApiError, credentialRequired, graphqlCodeOf } from '../errors.ts'
import { formatGraphqlErrors, GRAPHQL_RESPONSE_MEDIA_TYPE, wantsGraphqlResponse } from './errors.ts'
import { createMemoryCostBucket, createRedisCostBucket } from './cost-bucket.ts'
import { registerPublicDataCache } from './cache.ts'
import { refuseGetWithoutOperation } from './get-operation.ts'
import { enforceOperationLimits, enforceSubscriptionLimits } from './limits.ts'
import { graphqlResolvers } from './resolvers.ts'
import { createBoundedPubSub, SLOW_SUBSCRIBER_CLOSE_CODE } from './pubsub.ts'
import { registerSubscriptionTransport, type SubscriptionRequest } from './websocket.ts'
import { refuseUnstorableText } from './storable-text.ts'
import { refuseMalformedRequests } from './request-problems.ts'
import { registerGraphiql } from './graphiql.ts'
import { observeGraphql, tracedLoaders, tracedResolvers } from './observability.ts'

declare module 'mercurius' {
  interface MercuriusContext {
    caller: Caller
    /** What this operation cost and what the caller has left: `extensions.cost` of the response. */
    cost?: CostReport
    /** On a subscription: ends the subscriber's connection because it fell too far behind. */
    closeAsTooSlow?: () => void
    /** On a subscription connection: admits a subscribe or throws its error (websocket.ts). */
    admitSubscription?: (id: string) => void
    /** On a subscription: the variables and operationName the client sent with operation `id`. */
    subscriptionRequest?: (id: string) => SubscriptionRequest | undefined
  }
}

export interface CostReport {
  requestedQueryCost: number
  throttleStatus: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number }
}

function loadManifest(path: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>
  } catch (error) {
    throw new Error(`GRAPHQL_PERSISTED_MANIFEST ${path} cannot be read: ${(error as Error).message}`)
  }
}

/**
 * GRAPHQL_PERSISTED_ONLY: every request must name, by its automatic-persisted-query hash, a
 * document of the manifest; a full query or an unlisted hash is PERSISTED_QUERY_NOT_ALLOWED.
 */
function allowListedQueries(manifest: Record<string, string>): PersistedQueryProvider {
  const notAllowed = () =>
    new ApiError('PERSISTED_QUERY_NOT_ALLOWED', "Only the persisted queries of this server's allow-list are executed.")
  return {
    isPersistedQuery: () => true,
    // The listed document is what runs, whatever text came with the hash: nothing to re-check.
    isPersistedQueryRetry: () => false,
    getHash: (body) => {
      const persisted = (body as { extensions?: { persistedQuery?: { version?: number; sha256Hash?: string } } }).extensions?.persistedQuery
      if (persisted?.version !== 1 || typeof persisted.sha256Hash !== 'string') throw notAllowed()
      return persisted.sha256Hash
    },
    getQueryFromHash: async (hash: string) => {
      const query = Object.hasOwn(manifest, hash) ? manifest[hash] : undefined
      if (query === undefined) throw notAllowed()
      return query
    },
  }
}

function rejectUnauthenticated(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (request.caller) return undefined
  const error = credentialRequired(request.credentialError)
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value)
  if (request.cost) request.cost.errorCode = error.code
  return reply
    .code(401)
    .send({ errors: [{ message: error.detail, extensions: { code: graphqlCodeOf(error.code) } }], extensions: { requestId: request.id } })
}

export const graphqlPlugin = fp<{ config: AppConfig; sdl: string }>(
  async function graphql(app, options) {
    const { resolvers, loaders } = graphqlResolvers()
    const { subscriptions } = options.config
    const sockets = await registerSubscriptionTransport(app, {
      keepAliveMs: subscriptions.keepAliveMs,
      initTimeoutMs: subscriptions.initTimeoutMs,
      closeGraceMs: 2000,
      maxSubscriptions: subscriptions.maxPerConnection,
    })
    const persistedQueries = options.config.graphql.persistedOnly
      ? allowListedQueries(loadManifest(options.config.graphql.persistedManifest))
      : mercurius.persistedQueryDefaults.automatic(1024)
    await app.register(mercurius, {
      schema: options.sdl,
      resolvers: tracedResolvers(app, resolvers) as never,
      loaders: tracedLoaders(app, loaders) as never,
      path: '/graphql',
      // Our own GraphiQL page (graphiql.ts) replaces Mercurius', which loads from unpkg.com.
      graphiql: false,
      context: (request) => ({ caller: request.caller as Caller }),
      jit: options.config.graphql.jit,
      errorFormatter: formatGraphqlErrors as never,
      // graphql-transport-ws. Connections are admitted (or refused) in websocket.ts.
      subscription: {
        // The typings ask for an `emitter` that Mercurius never reads from a custom pubsub.
        pubsub: createBoundedPubSub(subscriptions.queueLimit) as unknown as CustomPubSub,
        // websocket.ts already weighed the upgrade header against connection_init's credential.
        context: (socket) => ({
          caller: sockets.callerOf(socket),
          closeAsTooSlow: () => socket.close(SLOW_SUBSCRIBER_CLOSE_CODE, 'Subscriber too slow: events were dropped'),
          admitSubscription: (id: string) => sockets.admitSubscription(socket, id),
          subscriptionRequest: (id: string) => sockets.subscriptionRequest(socket, id),
        }),
      },
      persistedQueryProvider: persistedQueries,
    })
    if (options.config.nodeEnv !== 'production') await registerGraphiql(app, '/graphql')
    refuseUnstorableText(app)
    refuseMalformedRequests(app)
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

    // Depth, cost, the mutation count and the caller's points bucket, before anything executes.
    app.graphql.addHook('preExecution', enforceOperationLimits(options.config.graphql, bucket))
    app.graphql.addHook('onResolution', async (execution, context) => {
      if (context.cost) (execution as { extensions?: Record<string, unknown> }).extensions = { ...execution.extensions, cost: context.cost }
    })

    await registerPublicDataCache(app)
    refuseGetWithoutOperation(app, persistedQueries)

    app.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.url !== '/graphql') return
      // A WebSocket upgrade authenticates in connection_init (subscriptions check the caller).
      if (request.headers.upgrade?.toLowerCase() === 'websocket') return
      return rejectUnauthenticated(request, reply)
    })

    // GraphQL-over-HTTP: a client that asks for the graphql-response media type gets it.
    app.addHook('onSend', async (request, reply, payload) => {
      if (request.routeOptions.url === '/graphql' && wantsGraphqlResponse(request.headers.accept)) {
        reply.type(`${GRAPHQL_RESPONSE_MEDIA_TYPE}; charset=utf-8`)
      }
      return payload
    })

    app.get('/graphql/schema.graphql', async (_request, reply) => reply.type('application/graphql; charset=utf-8').send(options.sdl))
  },
  { name: 'graphql', dependencies: ['auth', 'redis'] },
)
