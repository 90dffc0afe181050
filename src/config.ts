/**
 * The environment, read and validated once at start-up. A bad value stops the start with one line
 * naming the variable, rather than surfacing later as a confusing runtime error.
 */
import { existsSync } from 'node:fs'

export interface AppConfig {
  host: string
  port: number
  nodeEnv: string
  /** `postgres://…` for a pg pool, `memory://` for an in-memory PGlite, else a PGlite data directory. */
  databaseUrl: string | undefined
  /** Longest a PostgreSQL statement may run (server-side statement_timeout); past it the request is 503. */
  databaseStatementTimeoutMs: number
  dataDir: string
  redisUrl: string | undefined
  /**
   * The HS256 key (JWT_SECRET; the development secret when neither it nor JWT_ISSUER is set), or
   * undefined when JWT_ISSUER is set without JWT_SECRET: then no HS256 token is accepted (decisions §18).
   */
  jwtSecret: string | undefined
  /** True when JWT_SECRET was not set and the development secret is in use. */
  jwtSecretIsDefault: boolean
  /** Tokens from an identity provider (decisions §18); undefined without JWT_ISSUER. */
  jwtIssuer: IssuerConfig | undefined
  /** The claim that carries the caller's user id, in every token (JWT_USER_ID_CLAIM, `sub` by default). */
  jwtUserIdClaim: string
  /** The key cursors are signed with: CURSOR_SECRET, else JWT_SECRET, else the development secret. */
  cursorSecret: string
  /** Longest lifetime (`exp - iat`) a bearer token may have; a token meant to live longer is refused. */
  jwtMaxLifetimeMs: number
  /** Base of absolute URLs (Location, page.next) and of the served contract's `servers`; no trailing slash. */
  publicUrl: string | undefined
  /**
   * Origins a browser app may call the service from (decisions §12): a list of exact origins, `'*'`
   * for any, or undefined when CORS is off (the default).
   */
  corsOrigins: string[] | '*' | undefined
  seed: boolean
  logLevel: string
  rateLimit: { max: number; windowMs: number }
  /**
   * Whether responses also carry the legacy RateLimit-Limit/-Remaining/-Reset fields beside the
   * IETF draft's RateLimit and RateLimit-Policy (decisions §13, "Lean responses").
   */
  rateLimitLegacyHeaders: boolean
  /**
   * How long a SIGTERM'd instance keeps serving with `/readyz` at 503 before it closes, so that a
   * load balancer's health checks take it out first (decisions §13).
   */
  shutdownDrainMs: number
  /**
   * DB_POOLED: whether DATABASE_URL leads to a pooler in transaction mode (PgBouncer); undefined to
   * find out at start (createDatabase). Pooled costs a read outside a transaction three statements.
   */
  databasePooled: boolean | undefined
  /** DATABASE_REPLICA_URLS: streaming replicas of DATABASE_URL that serve reads (decisions §15); empty: none. */
  databaseReplicaUrls: string[]
  /** DATABASE_REPLICA_MAX_LAG: a replica further behind than this serves nothing until it catches up. */
  databaseReplicaMaxLagMs: number
  /** Whether this instance relays the event outbox (every instance listens for relayed events). */
  eventsRelay: boolean
  /**
   * Where the LISTEN connection goes (decisions §13): a direct PostgreSQL URL, `false` for none
   * (delivery by the one-second poll), undefined for DATABASE_URL itself. Behind a pooler in
   * transaction mode a LISTEN is lost with the server connection it ran on, so it needs its own.
   */
  eventsDatabaseUrl: string | false | undefined
  events: {
    /** How long the event log keeps an event (decisions §13); a resume point older than that is 410 EVENTS_EXPIRED. */
    retentionMs: number
    /** How often an idle event stream gets a comment line (proxies close silent connections). */
    streamHeartbeatMs: number
    /** Open event streams one caller may hold on this instance. */
    maxStreamsPerCaller: number
    /** How long a stream may wait for its reader to take a write before it is cut (docs/events.md). */
    streamStallTimeoutMs: number
  }
  /** Webhook deliveries (decisions §13). */
  webhooks: {
    /** Whether target URLs may be http and resolve to addresses that are not global unicast: loopback, private, link-local, special-purpose (development and tests). */
    allowPrivate: boolean
    /** How long one attempt may take before it counts as failed. */
    timeoutMs: number
    /** The waits before each retry; the last one repeats until `disableAfterMs`. */
    retrySchedule: number[]
    /** How long a delivery may keep failing (from its first attempt) before its endpoint is disabled. */
    disableAfterMs: number
    /** Endpoints one instance delivers to at once. */
    concurrency: number
    /** How long a delivery and its attempts are kept once nothing will attempt it again (decisions §17). */
    deliveryRetentionMs: number
    /** How often an instance looks for due retries besides being woken by new events. */
    pollMs: number
  }
  graphql: {
    maxDepth: number
    maxCost: number
    /** Root fields one mutation operation may run (aliases counted). */
    maxMutations: number
    /** Tokens one GraphQL document may have; a longer one is refused as it is parsed. */
    maxTokens: number
    /** Bytes of JSON one GraphQL response (or subscription event) may carry; past them it is abandoned. */
    maxResponseBytes: number
    costBucket: number
    costRestoreRate: number
    persistedOnly: boolean
    persistedManifest: string
    /** Compile a query with graphql-jit after this many runs; 0 turns JIT off. */
    jit: number
  }
  subscriptions: {
    /** Undelivered events a subscription may queue before its connection is closed with 1013. */
    queueLimit: number
    /** WebSocket ping interval; a peer that misses one is disconnected. */
    keepAliveMs: number
    /** How long a new connection has to send connection_init. */
    initTimeoutMs: number
    /** Active subscriptions one WebSocket may carry; a further subscribe gets an error. */
    maxPerConnection: number
    /** WebSocket connections one caller (token subject) may hold on this instance; a further one is closed with 4430. */
    maxConnectionsPerCaller: number
    /** Active subscriptions one caller may hold across its connections on this instance; a further subscribe gets an error. */
    maxPerCaller: number
    /**
     * How long an event whose fields cannot be resolved because the database is unavailable is
     * retried before it is delivered with a DATABASE_UNAVAILABLE error naming it.
     */
    outageWaitMs: number
  }
  /** Bearer token that GET /metrics requires (METRICS_TOKEN); open when undefined. */
  metricsToken: string | undefined
  /**
   * OpenTelemetry traces, off unless configured with the standard variables: `otlp` when
   * OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set, `console` with
   * OTEL_TRACES_EXPORTER=console; OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true turn them off.
   */
  tracing: { exporter: 'otlp' | 'console' | undefined; serviceName: string }
  /** Deliberate HTTP timeouts (decisions §12): a client that trickles headers or a body is cut off. */
  http: {
    /** Time to receive a request's headers. */
    headersTimeoutMs: number
    /** Time to receive a whole request, body included (not the time to answer it). */
    requestTimeoutMs: number
    /** How long an idle keep-alive connection stays open. */
    keepAliveTimeoutMs: number
  }
}

/** The identity provider whose tokens are accepted (decisions §18). */
export interface IssuerConfig {
  /** JWT_ISSUER: the `iss` a token must carry, exactly as the provider writes it. */
  issuer: string
  /** JWT_AUDIENCE: the `aud` a token must carry (or include). */
  audience: string
  /** JWT_JWKS_URL: where the signing keys are; undefined to find them through OpenID discovery. */
  jwksUrl: string | undefined
  /** JWT_JWKS_TIMEOUT: longest a fetch of the discovery document or the keys may take, and a request wait for one. */
  fetchTimeoutMs: number
  /** JWT_JWKS_COOLDOWN: least time between two fetches of the keys, whatever the number of unknown `kid`s. */
  cooldownMs: number
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

/**
 * Reads `.env` (KEY=value lines, as `.env.example` shows) into process.env when the file exists;
 * a variable already set in the environment keeps its value. `npm start` and `npm run token` call
 * it, so both sign and verify with the same JWT_SECRET.
 */
export function loadEnvFile(path = '.env'): boolean {
  if (!existsSync(path)) return false
  process.loadEnvFile(path)
  return true
}

export const DEVELOPMENT_JWT_SECRET = 'development-secret-do-not-use-in-production'

type Env = Record<string, string | undefined>

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`)
  return value
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw === 'true' || raw === '1') return true
  if (raw === 'false' || raw === '0') return false
  throw new ConfigError(name, `must be true or false, got "${raw}"`)
}

/** Accepts plain milliseconds or a number with a unit: `60000`, `60s`, `1m`, `1h`, `7d`. */
function duration(env: Env, name: string, fallbackMs: number, minMs = 1000): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallbackMs
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim())
  if (!match) throw new ConfigError(name, `must be a duration such as 60000, 60s or 1m, got "${raw}"`)
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h' | 'd']
  const value = Number(match[1]) * unit
  if (value < minMs) throw new ConfigError(name, minMs === 1000 ? 'must be at least one second' : `must be at least ${minMs} ms`)
  return value
}

/** A comma-separated list of durations (`5s,30s,2m`), each as `duration` reads it. */
function durations(env: Env, name: string, fallbackMs: number[]): number[] {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallbackMs
  return raw.split(',').map((part) => {
    if (part.trim() === '') throw new ConfigError(name, `must be comma-separated durations such as 5s,30s,2m, got "${raw}"`)
    return duration({ [name]: part.trim() }, name, 0, 10)
  })
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`)
  }
  return raw
}

/** DATABASE_REPLICA_URLS: comma-separated postgres:// URLs; replicas need a PostgreSQL primary (PGlite has none). */
function replicaUrls(env: Env): string[] {
  const raw = env.DATABASE_REPLICA_URLS?.trim()
  if (raw === undefined || raw === '') return []
  const urls = raw
    .split(',')
    .map((part) => url({ DATABASE_REPLICA_URLS: part.trim() }, 'DATABASE_REPLICA_URLS', ['postgres:', 'postgresql:']))
  if (urls.some((each) => each === undefined))
    throw new ConfigError('DATABASE_REPLICA_URLS', `must be comma-separated postgres:// URLs, got "${raw}"`)
  const primary = env.DATABASE_URL ?? ''
  if (env.DATABASE_URL !== undefined && !/^postgres(ql)?:/.test(primary))
    throw new ConfigError('DATABASE_REPLICA_URLS', 'needs a PostgreSQL DATABASE_URL: PGlite has no replicas')
  return urls.filter((each) => each !== undefined)
}

/** PUBLIC_URL: an absolute http(s) URL that can prefix `/api/v1`, so no query, fragment or credentials. */
function publicUrl(env: Env): string | undefined {
  const raw = url(env, 'PUBLIC_URL', ['http:', 'https:'])
  if (raw === undefined) return undefined
  const parsed = new URL(raw)
  if (parsed.search !== '' || parsed.hash !== '' || raw.includes('?') || raw.includes('#')) {
    throw new ConfigError('PUBLIC_URL', `must be a base URL without a query or fragment, got "${raw}"`)
  }
  if (parsed.username !== '' || parsed.password !== '') throw new ConfigError('PUBLIC_URL', 'must not contain credentials')
  return raw.replace(/\/+$/, '')
}

/**
 * CORS_ORIGINS: `*`, or comma-separated origins exactly as a browser sends them in `Origin`
 * (`https://app.example.com`, `http://localhost:5173`): scheme, host and port only.
 */
function corsOrigins(env: Env): string[] | '*' | undefined {
  const raw = env.CORS_ORIGINS?.trim()
  if (raw === undefined || raw === '') return undefined
  if (raw === '*') return '*'
  const origins = raw.split(',').map((part) => part.trim())
  for (const origin of origins) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (
      !parsed ||
      (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ||
      parsed.origin !== origin ||
      parsed.hostname.includes('*')
    ) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `must be * or comma-separated origins such as https://app.example.com (scheme, host and optional port; no path, no trailing slash), got "${origin}"`,
      )
    }
  }
  return [...new Set(origins)]
}

/** A secret of at least 32 characters (a 256-bit HMAC key), or undefined when unset. */
function secret(env: Env, name: string): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  if (raw.length < 32) throw new ConfigError(name, 'must be at least 32 characters (HMAC-SHA256 wants a 256-bit key)')
  return raw
}

/**
 * JWT_ISSUER and what goes with it (decisions §18). A token from an issuer must be meant for this
 * service, so JWT_AUDIENCE is required with it; JWT_AUDIENCE and JWT_JWKS_URL mean nothing without it.
 */
function issuer(env: Env): IssuerConfig | undefined {
  const issuerUrl = url(env, 'JWT_ISSUER', ['http:', 'https:'])
  const audience = env.JWT_AUDIENCE?.trim() || undefined
  const jwksUrl = url(env, 'JWT_JWKS_URL', ['http:', 'https:'])
  const fetchTimeoutMs = duration(env, 'JWT_JWKS_TIMEOUT', 2000, 100)
  const cooldownMs = duration(env, 'JWT_JWKS_COOLDOWN', 10_000, 10)
  if (issuerUrl === undefined) {
    if (audience !== undefined) throw new ConfigError('JWT_AUDIENCE', 'is used only with JWT_ISSUER')
    if (jwksUrl !== undefined) throw new ConfigError('JWT_JWKS_URL', 'is used only with JWT_ISSUER')
    return undefined
  }
  if (audience === undefined) throw new ConfigError('JWT_AUDIENCE', "is required with JWT_ISSUER: the `aud` of this service's tokens")
  return { issuer: issuerUrl, audience, jwksUrl, fetchTimeoutMs, cooldownMs }
}

/** JWT_USER_ID_CLAIM: a claim name, used as it is (Auth0's namespaced claims are URLs, dots and all). */
function userIdClaim(env: Env): string {
  const raw = env.JWT_USER_ID_CLAIM
  if (raw === undefined || raw === '') return 'sub'
  if (raw.trim() !== raw) throw new ConfigError('JWT_USER_ID_CLAIM', `must be a claim name without surrounding spaces, got "${raw}"`)
  return raw
}

export function loadConfig(env: Env = process.env): AppConfig {
  const nodeEnv = env.NODE_ENV ?? 'development'
  const jwtSecret = secret(env, 'JWT_SECRET')
  const jwtIssuer = issuer(env)
  const cursorSecret = secret(env, 'CURSOR_SECRET')
  if (nodeEnv === 'production' && jwtSecret === undefined) {
    if (jwtIssuer === undefined) throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production (or JWT_ISSUER)')
    // Cursors are signed; with the public development secret anyone could forge one.
    if (cursorSecret === undefined) throw new ConfigError('CURSOR_SECRET', 'is required when NODE_ENV=production and JWT_SECRET is unset')
  }
  const jwtSecretIsDefault = jwtSecret === undefined && jwtIssuer === undefined
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    nodeEnv,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:', 'memory:']),
    databaseStatementTimeoutMs: duration(env, 'DB_STATEMENT_TIMEOUT', 5000, 100),
    dataDir: env.DATA_DIR || './data',
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    jwtSecret: jwtSecretIsDefault ? DEVELOPMENT_JWT_SECRET : jwtSecret,
    jwtSecretIsDefault,
    jwtIssuer,
    jwtUserIdClaim: userIdClaim(env),
    cursorSecret: cursorSecret ?? jwtSecret ?? DEVELOPMENT_JWT_SECRET,
    jwtMaxLifetimeMs: duration(env, 'JWT_MAX_LIFETIME', 24 * 3_600_000),
    publicUrl: publicUrl(env),
    corsOrigins: corsOrigins(env),
    seed: boolean(env, 'SEED', true),
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    eventsRelay: boolean(env, 'EVENTS_RELAY', true),
    databaseReplicaUrls: replicaUrls(env),
    databaseReplicaMaxLagMs: duration(env, 'DATABASE_REPLICA_MAX_LAG', 5000, 100),
    databasePooled: env.DB_POOLED === undefined || env.DB_POOLED === '' ? undefined : boolean(env, 'DB_POOLED', false),
    shutdownDrainMs: duration(env, 'SHUTDOWN_DRAIN', 0, 0),
    eventsDatabaseUrl: env.EVENTS_DATABASE_URL === 'poll' ? false : url(env, 'EVENTS_DATABASE_URL', ['postgres:', 'postgresql:']),
    events: {
      retentionMs: duration(env, 'EVENTS_RETENTION', 7 * 86_400_000),
      streamHeartbeatMs: duration(env, 'EVENTS_STREAM_HEARTBEAT', 15_000, 10),
      maxStreamsPerCaller: integer(env, 'EVENTS_STREAM_MAX_PER_CALLER', 10, 1, 10_000),
      streamStallTimeoutMs: duration(env, 'EVENTS_STREAM_STALL_TIMEOUT', 30_000, 10),
    },
    webhooks: {
      allowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      timeoutMs: duration(env, 'WEBHOOK_TIMEOUT', 10_000, 10),
      retrySchedule: durations(env, 'WEBHOOK_RETRY_SCHEDULE', [5000, 30_000, 120_000, 600_000, 3_600_000, 6 * 3_600_000]),
      disableAfterMs: duration(env, 'WEBHOOK_DISABLE_AFTER', 3 * 86_400_000, 10),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 10, 1, 1000),
      deliveryRetentionMs: duration(env, 'WEBHOOK_DELIVERY_RETENTION', 30 * 86_400_000, 1000),
      pollMs: duration(env, 'WEBHOOK_POLL', 1000, 10),
    },
    rateLimit: {
      max: integer(env, 'RATE_LIMIT_MAX', 600, 1, 1_000_000),
      windowMs: duration(env, 'RATE_LIMIT_WINDOW', 60_000),
    },
    rateLimitLegacyHeaders: boolean(env, 'RATE_LIMIT_LEGACY_HEADERS', false),
    graphql: {
      maxDepth: integer(env, 'GRAPHQL_MAX_DEPTH', 10, 1, 100),
      maxCost: integer(env, 'GRAPHQL_MAX_COST', 5000, 1, 10_000_000),
      maxMutations: integer(env, 'GRAPHQL_MAX_MUTATIONS', 25, 1, 10_000),
      // The introspection query GraphiQL and code generators send has about 200 tokens.
      maxTokens: integer(env, 'GRAPHQL_MAX_TOKENS', 30_000, 1000, 10_000_000),
      maxResponseBytes: integer(env, 'GRAPHQL_MAX_RESPONSE_BYTES', 5 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      costBucket: integer(env, 'GRAPHQL_COST_BUCKET', 20_000, 1, 100_000_000),
      costRestoreRate: integer(env, 'GRAPHQL_COST_RESTORE_RATE', 1000, 1, 100_000_000),
      persistedOnly: boolean(env, 'GRAPHQL_PERSISTED_ONLY', false),
      persistedManifest: env.GRAPHQL_PERSISTED_MANIFEST || 'src/generated/graphql/persisted-queries.json',
      jit: integer(env, 'GRAPHQL_JIT', 1, 0, 1000),
    },
    subscriptions: {
      queueLimit: integer(env, 'SUBSCRIPTION_QUEUE_LIMIT', 1000, 1, 1_000_000),
      keepAliveMs: duration(env, 'SUBSCRIPTION_KEEPALIVE', 15_000, 10),
      initTimeoutMs: duration(env, 'SUBSCRIPTION_INIT_TIMEOUT', 10_000, 10),
      maxPerConnection: integer(env, 'SUBSCRIPTION_MAX_PER_CONNECTION', 100, 1, 10_000),
      maxConnectionsPerCaller: integer(env, 'SUBSCRIPTION_MAX_CONNECTIONS_PER_CALLER', 10, 1, 10_000),
      maxPerCaller: integer(env, 'SUBSCRIPTION_MAX_PER_CALLER', 200, 1, 1_000_000),
      outageWaitMs: duration(env, 'SUBSCRIPTION_OUTAGE_WAIT', 10_000, 0),
    },
    http: httpTimeouts(env),
    metricsToken: metricsToken(env),
    tracing: tracing(env),
  }
}

const MIN_METRICS_TOKEN_LENGTH = 16

function metricsToken(env: Env): string | undefined {
  const token = env.METRICS_TOKEN
  if (token === undefined || token === '') return undefined
  // It travels as a bearer token: the same characters the Authorization header accepts.
  if (!/^[A-Za-z0-9_\-.~+/]+=*$/.test(token)) throw new ConfigError('METRICS_TOKEN', 'must be a bearer token (letters, digits and -._~+/)')
  if (token.length < MIN_METRICS_TOKEN_LENGTH)
    throw new ConfigError('METRICS_TOKEN', `must be at least ${MIN_METRICS_TOKEN_LENGTH} characters`)
  return token
}

function tracing(env: Env): AppConfig['tracing'] {
  const serviceName = env.OTEL_SERVICE_NAME || 'contract-api'
  const endpoint =
    url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']) ?? url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:'])
  if (boolean(env, 'OTEL_SDK_DISABLED', false)) return { exporter: undefined, serviceName }
  const exporter = env.OTEL_TRACES_EXPORTER || 'otlp'
  if (exporter === 'none') return { exporter: undefined, serviceName }
  if (exporter === 'console') return { exporter: 'console', serviceName }
  if (exporter !== 'otlp') throw new ConfigError('OTEL_TRACES_EXPORTER', `must be otlp, console or none, got "${exporter}"`)
  // Off unless an endpoint is named: the SDK's default (localhost:4318) is no one's collector here.
  return { exporter: endpoint ? 'otlp' : undefined, serviceName }
}

function httpTimeouts(env: Env): AppConfig['http'] {
  const headersTimeoutMs = duration(env, 'HTTP_HEADERS_TIMEOUT', 10_000, 100)
  const requestTimeoutMs = duration(env, 'HTTP_REQUEST_TIMEOUT', 30_000, 100)
  // Node refuses a headers timeout longer than the request timeout, which includes the headers.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT',
      `must not be longer than HTTP_REQUEST_TIMEOUT (${requestTimeoutMs} ms), got ${headersTimeoutMs} ms`,
    )
  }
  return { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs: duration(env, 'HTTP_KEEP_ALIVE_TIMEOUT', 5000, 100) }
}
