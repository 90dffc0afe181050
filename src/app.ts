/**
 * buildApp(options) builds the whole service and returns it ready, without listening: tests drive
 * it with inject, src/server.ts listens. It holds no module-level state, so several instances can
 * run in one process.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { AppConfig } from './config.ts'
import { loadContracts, type Contracts } from './contract/contracts.ts'
import type { DatabaseHandle } from './db/database.ts'
import { createValidatorCompiler } from './contract/validation.ts'
import { lazySerializerFactory } from './http/lazy-serializers.ts'
import { deferredRequestLogger } from './http/deferred-request-logger.ts'
import { registerOperations } from './http/register-operations.ts'
import { registerJsonBodies } from './http/utf8-bodies.ts'
import { answerClientError, answerFrameworkError } from './http/unrouted-answers.ts'
import { servedContract } from './http/served-contract.ts'
import { requestLogSerializer } from './http/redact-credentials.ts'
import { requestIdOf } from './http/request-id.ts'
import authPlugin from './plugins/auth.ts'
import { createTokenVerifier } from './auth/tokens.ts'
import dbPlugin from './plugins/db.ts'
import problemJson from './plugins/problem-json.ts'
import securityHeaders from './plugins/security-headers.ts'
import shutdown from './plugins/shutdown.ts'
import corsPlugin from './plugins/cors.ts'
import rateLimitPlugin from './plugins/rate-limit.ts'
import redisPlugin from './plugins/redis.ts'
import versioning from './plugins/versioning.ts'
import httpCaching from './plugins/http-caching.ts'
import requestCost from './plugins/request-cost.ts'
import metricsPlugin from './plugins/metrics.ts'
import deprecationPlugin from './plugins/deprecation.ts'
import { deprecatedOperations } from './contract/deprecated-operations.ts'
import tracingPlugin, { traceLogFields } from './plugins/tracing.ts'
import eventsPlugin from './events/plugin.ts'
import webhooksPlugin from './modules/webhooks/webhooks.plugin.ts'
import { createServices } from './services.ts'
import { createCacheInvalidator } from './graphql/cache.ts'
import { healthRoutes } from './modules/meta/health.routes.ts'
import { apiIndexRoutes } from './modules/meta/api-index.routes.ts'
import { rootRoutes } from './modules/meta/root.routes.ts'
import { restHandlers } from './modules/rest-handlers.ts'
import { graphqlResolvers } from './modules/graphql-resolvers.ts'
import { graphqlPlugin } from './graphql/plugin.ts'
import { mcpRoutes } from './mcp/plugin.ts'

export interface BuildAppOptions {
  config: AppConfig
  /** An open database to use instead of opening one from the configuration (tests). */
  database?: DatabaseHandle
  contracts?: Contracts
  /** Where logs go (tests capture them); stdout by default. */
  loggerStream?: { write(line: string): void }
  /** Turns tracing on with spans going here (tests: an InMemorySpanExporter), whatever the configuration. */
  spanExporter?: SpanExporter
}

const ONE_MIB = 1024 * 1024
/** How often Node looks for connections past the headers or request timeout. */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options
  const contracts = options.contracts ?? loadContracts()
  // While tracing is on, every log line carries the active span's trace_id and span_id; while it
  // is off, the logger is left as it is and the OpenTelemetry API is not even loaded here.
  const traceIds = options.spanExporter || config.tracing.exporter ? traceLogFields(await import('@opentelemetry/api')) : undefined
  const app = Fastify({
    bodyLimit: ONE_MIB,
    trustProxy: false,
    // Deliberate timeouts (decisions §12): a client that trickles headers or a body is answered
    // 408 and cut off, and an idle keep-alive connection is closed. Node checks the first two
    // only every connectionsCheckingInterval (30 s by default), so that is shortened too.
    requestTimeout: config.http.requestTimeoutMs,
    // A request that arrives while the app closes is refused by its route's own hooks, with the
    // catalogue's 503 and every header an answer carries (plugins/shutdown.ts), not a bare body.
    return503OnClosing: false,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    http: { headersTimeout: config.http.headersTimeoutMs, connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS },
    logger: {
      level: config.logLevel,
      // A credential never reaches the logs, wherever a serializer might put it.
      redact: {
        // rawPacket: the bytes of a request Node could not parse, headers and all (trace level).
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'request.headers.authorization',
          '*.authorization',
          'authorization',
          'err.rawPacket',
        ],
        censor: '[redacted]',
      },
      // …and neither does a token sent in the query string, which is otherwise ignored.
      serializers: { req: requestLogSerializer },
      ...(traceIds ? { mixin: traceIds } : {}),
      ...(options.loggerStream ? { stream: options.loggerStream } : {}),
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // A URL the router refuses (FST_ERR_BAD_URL, FST_ERR_MAX_PARAM_LENGTH), and a request Node
    // cannot read (400, 408, 431), get a problem+json with a catalogue code and the headers every
    // answer carries, not Fastify's or Node's own bare body (http/unrouted-answers.ts).
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() } },
    // Request ids (http/request-id.ts): a sent X-Request-Id is vetted there, not taken verbatim.
    genReqId: requestIdOf,
    requestIdHeader: false,
    // Fastify's own request and response lines are off: one line per request instead, with its
    // cost (plugins/request-cost.ts).
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    // Each request's logger is made when it first logs (http/deferred-request-logger.ts).
    childLoggerFactory: deferredRequestLogger,
  })
  app.setValidatorCompiler(createValidatorCompiler())
  // JSON bodies, merge patches (RFC 7396) included, read from UTF-8 only (http/utf8-bodies.ts).
  registerJsonBodies(app, ONE_MIB)

  // First, so that its preClose runs before those that wait for work in flight.
  await app.register(shutdown)
  await app.register(securityHeaders, { publicUrl: config.publicUrl })
  // Before every hook that can answer early (versioning, auth, rate limits), so that a preflight
  // needs no token and every refusal carries the CORS headers.
  await app.register(corsPlugin, { origins: config.corsOrigins, legacyRateLimitHeaders: config.rateLimitLegacyHeaders })
  await app.register(problemJson)
  await app.register(redisPlugin, { url: config.redisUrl })
  // One verifier for every transport (decisions §18): REST, GraphQL, WebSocket, event streams, MCP.
  const verifier = createTokenVerifier({
    secret: config.jwtSecret,
    issuer: config.jwtIssuer,
    userIdClaim: config.jwtUserIdClaim,
    maxLifetimeMs: config.jwtMaxLifetimeMs,
    log: { warn: (message) => app.log.warn(message), info: (message) => app.log.info(message) },
  })
  await app.register(authPlugin, { verifier })
  await app.register(dbPlugin, {
    database: options.database,
    url: config.databaseUrl,
    dataDir: config.dataDir,
    seed: config.seed,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    pooled: config.databasePooled,
    replicas: { urls: config.databaseReplicaUrls, maxLagMs: config.databaseReplicaMaxLagMs },
  })
  // Observability, before any route so that every route is measured and traced.
  await app.register(tracingPlugin, { config: config.tracing, spanExporter: options.spanExporter })
  await app.register(requestCost)
  await app.register(metricsPlugin, { token: config.metricsToken })
  await app.register(deprecationPlugin)
  // After auth (its key is the caller) and the request's measurements (a 429 is measured and traced
  // like any answer), before every hook that can refuse a request: each refusal is counted too.
  await app.register(rateLimitPlugin, {
    max: config.rateLimit.max,
    windowMs: config.rateLimit.windowMs,
    legacyHeaders: config.rateLimitLegacyHeaders,
    redis: app.redis,
  })
  await app.register(versioning)
  await app.register(httpCaching)
  app.decorate('services', createServices({ db: app.db, statements: app.statements, config, invalidate: createCacheInvalidator(app) }))

  // Served with this server in `servers` (relative, or PUBLIC_URL), so that "Try it out" calls it.
  const served = servedContract(contracts, config.publicUrl)
  // @fastify/swagger types a static document as OpenAPI 2 or 3.0 only; ours is 3.1, served as is.
  await app.register(swagger, { mode: 'static', specification: { document: served.document as never } })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: {
      persistAuthorization: true,
      // "Try it out" revalidates what the browser cached (fetch's `cache: 'no-cache'`: the ETag is
      // sent and an unchanged answer costs a 304), so the list read after a POST shows the new
      // order rather than a copy up to 30 s old (lists are `private, max-age=30`). Sent to the page
      // as this function's source, in its initializer script (no inline script, no CDN).
      requestInterceptor: (request) => Object.assign(request, { cache: 'no-cache' }),
    },
  })
  await app.register(healthRoutes)
  await app.register(apiIndexRoutes, { config, contract: contracts.openApiDocument })
  await app.register(rootRoutes, { config })
  // Deprecation headers come from the contract the app is built from (options.contracts), once per route.
  const deprecated = deprecatedOperations(contracts.openApiDocument)
  await app.register(async (api) => registerOperations(api, restHandlers({ app: api, config, served }), deprecated))
  await app.register(graphqlPlugin, { config, sdl: contracts.graphqlSdl, schemaResolvers: graphqlResolvers() })
  // MCP for agents (decisions §13, "Agents"): the REST operations as tools, the contracts as served.
  const info = served.document.info
  await app.register(mcpRoutes, {
    publicUrl: config.publicUrl,
    authorizationServer: config.jwtIssuer?.issuer,
    corsOrigins: config.corsOrigins,
    contracts: {
      get openApiYaml() {
        return served.yaml
      },
      graphqlSdl: contracts.graphqlSdl,
    },
    version: typeof info === 'object' && info !== null && 'version' in info ? String(info.version) : 'unknown',
  })
  await app.register(eventsPlugin, { relay: config.eventsRelay, listenUrl: config.eventsDatabaseUrl, events: config.events })
  await app.register(webhooksPlugin, { config: config.webhooks })

  if (config.jwtSecretIsDefault) {
    app.log.warn('JWT_SECRET is not set: using the public development secret. Never do this in production.')
  }
  await app.ready()
  return app
}
