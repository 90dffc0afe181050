import t from 'tap'
import { ConfigError, loadConfig } from '../src/config.ts'

t.test('defaults follow decisions §1 and §9', async (t) => {
  const config = loadConfig({})
  t.equal(config.host, '127.0.0.1')
  t.equal(config.port, 3000)
  t.equal(config.databaseUrl, undefined)
  t.equal(config.dataDir, './data')
  t.equal(config.seed, true)
  t.equal(config.jwtSecretIsDefault, true)
  t.same(config.rateLimit, { max: 600, windowMs: 60_000 })
  t.same(
    [config.graphql.maxDepth, config.graphql.maxCost, config.graphql.costBucket, config.graphql.costRestoreRate],
    [10, 5000, 20_000, 1000],
  )
  t.equal(config.graphql.maxMutations, 25)
  t.equal(config.graphql.maxTokens, 30_000)
  t.equal(config.graphql.maxResponseBytes, 5_242_880, 'decisions §13: 5 MB')
  t.equal(config.jwtMaxLifetimeMs, 24 * 3_600_000, 'JWT_MAX_LIFETIME is 24 h (decisions §13)')
  t.same(
    config.events,
    { retentionMs: 7 * 86_400_000, streamHeartbeatMs: 15_000, maxStreamsPerCaller: 10, streamStallTimeoutMs: 30_000 },
    'events kept 7 days (decisions §13)',
  )
  t.equal(loadConfig({ EVENTS_RETENTION: '2d' }).events.retentionMs, 2 * 86_400_000, 'durations take days')
})

t.test('a bad value stops the start with a message naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /^Invalid configuration: PORT /],
    [{ PORT: '70000' }, /^Invalid configuration: PORT /],
    [{ DATABASE_URL: 'mysql://x' }, /^Invalid configuration: DATABASE_URL /],
    [{ REDIS_URL: 'not a url' }, /^Invalid configuration: REDIS_URL /],
    [{ RATE_LIMIT_WINDOW: 'soon' }, /^Invalid configuration: RATE_LIMIT_WINDOW /],
    [{ JWT_MAX_LIFETIME: 'a day' }, /^Invalid configuration: JWT_MAX_LIFETIME /],
    [{ SEED: 'maybe' }, /^Invalid configuration: SEED /],
    [{ EVENTS_RETENTION: 'a week' }, /^Invalid configuration: EVENTS_RETENTION /],
    [{ EVENTS_STREAM_MAX_PER_CALLER: '0' }, /^Invalid configuration: EVENTS_STREAM_MAX_PER_CALLER /],
    [{ EVENTS_STREAM_STALL_TIMEOUT: '5ms' }, /^Invalid configuration: EVENTS_STREAM_STALL_TIMEOUT must be at least 10 ms/],
    [{ JWT_SECRET: 'short' }, /^Invalid configuration: JWT_SECRET /],
    [{ GRAPHQL_MAX_DEPTH: '0' }, /^Invalid configuration: GRAPHQL_MAX_DEPTH /],
    [{ GRAPHQL_MAX_MUTATIONS: '0' }, /^Invalid configuration: GRAPHQL_MAX_MUTATIONS /],
    [{ GRAPHQL_MAX_MUTATIONS: 'many' }, /^Invalid configuration: GRAPHQL_MAX_MUTATIONS /],
    [{ GRAPHQL_MAX_TOKENS: '100' }, /^Invalid configuration: GRAPHQL_MAX_TOKENS must be between 1000 and 10000000/],
    [{ GRAPHQL_MAX_RESPONSE_BYTES: '5MB' }, /^Invalid configuration: GRAPHQL_MAX_RESPONSE_BYTES must be a whole number/],
    [{ GRAPHQL_MAX_RESPONSE_BYTES: '10' }, /^Invalid configuration: GRAPHQL_MAX_RESPONSE_BYTES must be between 1024 and 1073741824/],
    [{ RATE_LIMIT_WINDOW: '500ms' }, /^Invalid configuration: RATE_LIMIT_WINDOW must be at least one second/],
    [{ SUBSCRIPTION_QUEUE_LIMIT: '0' }, /^Invalid configuration: SUBSCRIPTION_QUEUE_LIMIT /],
    [{ SUBSCRIPTION_KEEPALIVE: '5ms' }, /^Invalid configuration: SUBSCRIPTION_KEEPALIVE must be at least 10 ms/],
    [{ SUBSCRIPTION_INIT_TIMEOUT: 'never' }, /^Invalid configuration: SUBSCRIPTION_INIT_TIMEOUT /],
    [{ SUBSCRIPTION_MAX_PER_CONNECTION: '0' }, /^Invalid configuration: SUBSCRIPTION_MAX_PER_CONNECTION must be between 1 and 10000/],
    [{ SUBSCRIPTION_MAX_PER_CONNECTION: 'many' }, /^Invalid configuration: SUBSCRIPTION_MAX_PER_CONNECTION must be a whole number/],
    [{ DB_STATEMENT_TIMEOUT: '50ms' }, /^Invalid configuration: DB_STATEMENT_TIMEOUT must be at least 100 ms/],
    [{ HTTP_HEADERS_TIMEOUT: 'soon' }, /^Invalid configuration: HTTP_HEADERS_TIMEOUT /],
    [{ HTTP_REQUEST_TIMEOUT: '50ms' }, /^Invalid configuration: HTTP_REQUEST_TIMEOUT must be at least 100 ms/],
    [{ HTTP_KEEP_ALIVE_TIMEOUT: '-1' }, /^Invalid configuration: HTTP_KEEP_ALIVE_TIMEOUT /],
    [{ HTTP_HEADERS_TIMEOUT: '40s' }, /^Invalid configuration: HTTP_HEADERS_TIMEOUT must not be longer than HTTP_REQUEST_TIMEOUT/],
    [{ PUBLIC_URL: 'api.example.com' }, /^Invalid configuration: PUBLIC_URL must be a URL/],
    [{ PUBLIC_URL: 'ftp://api.example.com' }, /^Invalid configuration: PUBLIC_URL must start with http:\/\/ or https:\/\//],
    [{ PUBLIC_URL: 'https://api.example.com/?x=1' }, /^Invalid configuration: PUBLIC_URL must be a base URL without a query or fragment/],
    [{ PUBLIC_URL: 'https://user:pw@api.example.com' }, /^Invalid configuration: PUBLIC_URL must not contain credentials/],
    [
      { CORS_ORIGINS: 'https://app.example.com/' },
      /^Invalid configuration: CORS_ORIGINS must be \* or comma-separated origins .*got "https:\/\/app.example.com\/"/,
    ],
    [{ CORS_ORIGINS: 'https://app.example.com/path' }, /^Invalid configuration: CORS_ORIGINS .*got "https:\/\/app.example.com\/path"/],
    [{ CORS_ORIGINS: 'app.example.com' }, /^Invalid configuration: CORS_ORIGINS .*got "app.example.com"/],
    [{ CORS_ORIGINS: 'https://a.example.com,,https://b.example.com' }, /^Invalid configuration: CORS_ORIGINS .*got ""/],
    [{ CORS_ORIGINS: 'ftp://files.example.com' }, /^Invalid configuration: CORS_ORIGINS /],
    [{ CORS_ORIGINS: 'https://*.example.com' }, /^Invalid configuration: CORS_ORIGINS /],
    [{ CORS_ORIGINS: 'https://a.example.com, *' }, /^Invalid configuration: CORS_ORIGINS .*got "\*"/],
    [{ JWT_ISSUER: 'https://id.example.com' }, /^Invalid configuration: JWT_AUDIENCE is required with JWT_ISSUER/],
    [{ JWT_ISSUER: 'id.example.com', JWT_AUDIENCE: 'api' }, /^Invalid configuration: JWT_ISSUER must be a URL/],
    [{ JWT_AUDIENCE: 'api' }, /^Invalid configuration: JWT_AUDIENCE is used only with JWT_ISSUER/],
    [{ JWT_JWKS_URL: 'https://id.example.com/jwks' }, /^Invalid configuration: JWT_JWKS_URL is used only with JWT_ISSUER/],
    [{ JWT_JWKS_TIMEOUT: '5ms' }, /^Invalid configuration: JWT_JWKS_TIMEOUT must be at least 100 ms/],
    [{ JWT_JWKS_COOLDOWN: 'often' }, /^Invalid configuration: JWT_JWKS_COOLDOWN /],
    [{ JWT_USER_ID_CLAIM: ' user_id' }, /^Invalid configuration: JWT_USER_ID_CLAIM /],
    [{ CURSOR_SECRET: 'short' }, /^Invalid configuration: CURSOR_SECRET /],
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
  }
})

t.test('production refuses to start without JWT_SECRET', async (t) => {
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), ConfigError)
  t.doesNotThrow(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }))
})

t.test('an identity provider instead of JWT_SECRET (decisions §18): no HS256 key at all, and cursors need their own', async (t) => {
  const issuer = { NODE_ENV: 'production', JWT_ISSUER: 'https://id.example.com/', JWT_AUDIENCE: 'https://api.example.com' }
  t.throws(() => loadConfig(issuer), {
    message: /^Invalid configuration: CURSOR_SECRET is required when NODE_ENV=production and JWT_SECRET is unset/,
  })
  const config = loadConfig({ ...issuer, CURSOR_SECRET: 'c'.repeat(32) })
  t.equal(config.jwtSecret, undefined, 'not even the development secret')
  t.equal(config.jwtSecretIsDefault, false)
  t.equal(config.cursorSecret, 'c'.repeat(32))
  t.same(config.jwtIssuer, {
    issuer: 'https://id.example.com/',
    audience: 'https://api.example.com',
    jwksUrl: undefined,
    fetchTimeoutMs: 2000,
    cooldownMs: 10_000,
  })
  t.equal(loadConfig({ ...issuer, NODE_ENV: 'development', JWT_SECRET: '' }).jwtSecret, undefined, 'an empty JWT_SECRET is unset')
  const both = loadConfig({ ...issuer, JWT_SECRET: 's'.repeat(32), JWT_USER_ID_CLAIM: 'https://api.example.com/user_id' })
  t.same([both.jwtSecret, both.cursorSecret, both.jwtUserIdClaim], ['s'.repeat(32), 's'.repeat(32), 'https://api.example.com/user_id'])
  const development = loadConfig({})
  t.same([development.jwtIssuer, development.jwtUserIdClaim, development.cursorSecret], [undefined, 'sub', development.jwtSecret])
})

t.test('durations accept units', async (t) => {
  t.equal(loadConfig({ RATE_LIMIT_WINDOW: '1m' }).rateLimit.windowMs, 60_000)
  t.equal(loadConfig({ RATE_LIMIT_WINDOW: '90s' }).rateLimit.windowMs, 90_000)
  t.equal(loadConfig({ RATE_LIMIT_WINDOW: '5000' }).rateLimit.windowMs, 5000)
  t.equal(loadConfig({ JWT_MAX_LIFETIME: '1h' }).jwtMaxLifetimeMs, 3_600_000)
  t.same(loadConfig({}).subscriptions, {
    queueLimit: 1000,
    keepAliveMs: 15_000,
    initTimeoutMs: 10_000,
    maxPerConnection: 100,
    maxConnectionsPerCaller: 10,
    maxPerCaller: 200,
    outageWaitMs: 10_000,
  })
  t.equal(loadConfig({ SUBSCRIPTION_OUTAGE_WAIT: '0' }).subscriptions.outageWaitMs, 0, 'SUBSCRIPTION_OUTAGE_WAIT=0: no retry')
  t.equal(loadConfig({ SUBSCRIPTION_KEEPALIVE: '100ms' }).subscriptions.keepAliveMs, 100)
  t.equal(loadConfig({ SUBSCRIPTION_MAX_PER_CONNECTION: '5' }).subscriptions.maxPerConnection, 5)
  t.equal(loadConfig({}).databaseStatementTimeoutMs, 5000, 'DB_STATEMENT_TIMEOUT is 5 s by default (decisions §12)')
  t.equal(loadConfig({ DB_STATEMENT_TIMEOUT: '1s' }).databaseStatementTimeoutMs, 1000)
  t.same(
    loadConfig({}).http,
    { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5000 },
    'HTTP timeouts of decisions §12',
  )
  t.same(loadConfig({ HTTP_HEADERS_TIMEOUT: '300ms', HTTP_REQUEST_TIMEOUT: '1s', HTTP_KEEP_ALIVE_TIMEOUT: '2s' }).http, {
    headersTimeoutMs: 300,
    requestTimeoutMs: 1000,
    keepAliveTimeoutMs: 2000,
  })
})

t.test('PUBLIC_URL is a base URL; its trailing slashes are dropped', async (t) => {
  t.equal(loadConfig({}).publicUrl, undefined)
  t.equal(loadConfig({ PUBLIC_URL: 'https://api.example.com' }).publicUrl, 'https://api.example.com')
  t.equal(loadConfig({ PUBLIC_URL: 'https://api.example.com/' }).publicUrl, 'https://api.example.com')
  t.equal(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080/shop//' }).publicUrl, 'http://127.0.0.1:8080/shop')
})

t.test('CORS is off unless CORS_ORIGINS is set: * or a list of exact origins', async (t) => {
  t.equal(loadConfig({}).corsOrigins, undefined)
  t.equal(loadConfig({ CORS_ORIGINS: '' }).corsOrigins, undefined)
  t.equal(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, '*')
  t.same(loadConfig({ CORS_ORIGINS: 'https://app.example.com' }).corsOrigins, ['https://app.example.com'])
  t.same(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins, [
    'https://app.example.com',
    'http://localhost:5173',
  ])
})

t.test('METRICS_TOKEN: /metrics is open without it; a token is a bearer token of at least 16 characters', async (t) => {
  t.equal(loadConfig({}).metricsToken, undefined)
  t.equal(loadConfig({ METRICS_TOKEN: 'scrape-token-0123456789' }).metricsToken, 'scrape-token-0123456789')
  t.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), {
    name: 'ConfigError',
    message: /^Invalid configuration: METRICS_TOKEN must be at least 16 characters/,
  })
  t.throws(() => loadConfig({ METRICS_TOKEN: 'has spaces in it, many' }), {
    name: 'ConfigError',
    message: /^Invalid configuration: METRICS_TOKEN must be a bearer token/,
  })
})

t.test('tracing is off unless the standard OpenTelemetry variables turn it on', async (t) => {
  t.same(loadConfig({}).tracing, { exporter: undefined, serviceName: 'contract-api' })
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing.exporter, 'otlp')
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing.exporter, 'otlp')
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing.exporter, undefined, 'otlp without an endpoint stays off')
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracing.exporter, 'console')
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing.exporter, undefined)
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing.exporter, undefined)
  t.equal(loadConfig({ OTEL_SERVICE_NAME: 'orders-eu' }).tracing.serviceName, 'orders-eu')
  t.throws(() => loadConfig({ OTEL_TRACES_EXPORTER: 'zipkin' }), {
    name: 'ConfigError',
    message: /^Invalid configuration: OTEL_TRACES_EXPORTER must be otlp, console or none/,
  })
  t.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), {
    name: 'ConfigError',
    message: /^Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT/,
  })
})

t.test('DB_POOLED: unset, found out at start; true or false forces the connection mode', async (t) => {
  t.equal(loadConfig({}).databasePooled, undefined)
  t.equal(loadConfig({ DB_POOLED: '' }).databasePooled, undefined)
  t.equal(loadConfig({ DB_POOLED: 'true' }).databasePooled, true)
  t.equal(loadConfig({ DB_POOLED: 'false' }).databasePooled, false)
  t.throws(() => loadConfig({ DB_POOLED: 'maybe' }), /^Invalid configuration: DB_POOLED /)
})
