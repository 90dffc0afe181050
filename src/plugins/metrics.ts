/**
 * GET /metrics: Prometheus text format (prom-client), one registry per app (never prom-client's
 * global one, so two apps in one process count apart). Never rate limited (a scraper polls from
 * one address), logged only at warn like the health probes, and behind a bearer token when
 * METRICS_TOKEN is set. docs/observability.md lists every metric.
 *
 * Request metrics are recorded when each response is sent, from `request.cost`
 * (plugins/request-cost.ts); the state of the pool, the outbox, Redis and the subscribers is read
 * when Prometheus scrapes, with one cheap query.
 */
import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { DatabaseDeadlineExceeded } from '../db/database-unavailable.ts'
import { outboxBacklog } from '../db/repositories/outbox.ts'
import { unauthenticated } from '../errors.ts'
import { isBoundedPubSub } from '../events/pubsub.ts'
import { sendProblem } from '../http/problems.ts'
import { redisStatus } from './redis.ts'
import { routeName } from './request-cost.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's registry: what GET /metrics serves. */
    metricsRegistry: Registry
  }
}

export interface MetricsOptions {
  /** METRICS_TOKEN: the bearer token a scrape must send; none when undefined. */
  token: string | undefined
}

/** Outbox topics, for subscriptions per topic. */
const EVENT_TOPICS = ['order.created', 'order.status_changed', 'article.created', 'comment.added']
/** Operation names are chosen by clients: past this many distinct names, the rest count as `other`. */
const MAX_OPERATION_NAMES = 200
const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
const IDEMPOTENCY_CONFLICTS = new Set(['IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED'])

/** Each request's measurements, in its series' pending list: duration, statements, database time. */
const MEASUREMENTS = 3
/** Requests a series holds before they are folded without waiting for a scrape. */
const FOLD_AFTER = 512

interface RequestSeries {
  requests: Counter.Internal
  duration: Histogram.Internal<'method' | 'route' | 'status'>
  statements: Histogram.Internal<'route'>
  dbTime: Histogram.Internal<'route'>
  /** Measurements not yet folded into the series, MEASUREMENTS per request. */
  pending: number[]
}

function foldSeries(series: RequestSeries): void {
  const { pending } = series
  if (pending.length === 0) return
  series.requests.inc(pending.length / MEASUREMENTS)
  for (let at = 0; at < pending.length; at += MEASUREMENTS) {
    series.duration.observe(pending[at]!)
    series.statements.observe(pending[at + 1]!)
    series.dbTime.observe(pending[at + 2]!)
  }
  pending.length = 0
}

function bearerMatches(authorization: string | undefined, token: string): boolean {
  const sent = /^Bearer (\S+)$/i.exec(authorization?.trim() ?? '')?.[1]
  if (sent === undefined) return false
  const a = Buffer.from(sent)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

export default fp<MetricsOptions>(
  async function metrics(app, options) {
    const registry = new Registry()
    const registers = [registry]
    // Other plugins register their own metrics here (plugins/deprecation.ts).
    app.decorate('metricsRegistry', registry)

    // ---- Per request ------------------------------------------------------------------------
    // Each request is one observation (decisions §19): its three measurements are pushed onto its
    // series' pending list, looked up by one string, and folded into the counter and the three
    // histograms when Prometheus scrapes (their collect), or once a list holds FOLD_AFTER requests,
    // so that memory stays bounded without a scraper. Bounded too: methods, routes and statuses are.
    const seriesByKey = new Map<string, RequestSeries>()
    const fold = (): void => {
      for (const series of seriesByKey.values()) foldSeries(series)
    }
    const labelNames = ['method', 'route', 'status'] as const
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by operationId (or route) and status.',
      labelNames,
      registers,
      collect: fold,
    })
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by operationId (or route) and status.',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
      collect: fold,
    })
    const statements = new Histogram({
      name: 'db_statements_per_request',
      help: 'SQL statements one request ran, by operationId (or route).',
      labelNames: ['route'],
      buckets: [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50],
      registers,
      collect: fold,
    })
    const dbTime = new Histogram({
      name: 'db_time_per_request_seconds',
      help: 'Time one request waited for its SQL statements, by operationId (or route).',
      labelNames: ['route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
      collect: fold,
    })
    const operations = new Counter({
      name: 'graphql_operations_total',
      help: 'GraphQL operations over HTTP by name and outcome (ok, error: executed with errors, refused: never executed).',
      labelNames: ['operation', 'outcome'],
      registers,
    })
    const operationCost = new Histogram({
      name: 'graphql_operation_cost_points',
      help: 'Points charged for an executed GraphQL operation, by name.',
      labelNames: ['operation'],
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
      registers,
    })
    const refusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused by a budget: requests (the per-caller request rate) or graphql_points (the points bucket).',
      labelNames: ['limit'],
      registers,
    })
    const replays = new Counter({
      name: 'idempotency_replays_total',
      help: 'Requests answered with the stored outcome of an earlier one with the same Idempotency-Key.',
      registers,
    })
    const conflicts = new Counter({
      name: 'idempotency_conflicts_total',
      help: 'Idempotency-Key conflicts: IDEMPOTENCY_KEY_IN_USE (still running) or IDEMPOTENCY_KEY_REUSED (another request).',
      labelNames: ['code'],
      registers,
    })
    const operationNames = new Set<string>()
    const operationLabel = (name: string): string => {
      if (!OPERATION_NAME.test(name)) return 'other'
      if (operationNames.has(name)) return name
      if (operationNames.size >= MAX_OPERATION_NAMES) return 'other'
      operationNames.add(name)
      return name
    }

    const record = (request: FastifyRequest, reply: FastifyReply): void => {
      const cost = request.cost
      if (!cost) return
      const route = routeName(request)
      const key = `${request.method} ${route} ${reply.statusCode}`
      let series = seriesByKey.get(key)
      if (!series) {
        const labels = { method: request.method, route, status: String(reply.statusCode) }
        series = {
          requests: requests.labels(labels),
          duration: duration.labels(labels),
          statements: statements.labels({ route }),
          dbTime: dbTime.labels({ route }),
          pending: [],
        }
        seriesByKey.set(key, series)
      }
      const pending = series.pending
      pending.push(reply.elapsedTime / 1000, cost.statements, cost.dbMs / 1000)
      if (pending.length >= FOLD_AFTER * MEASUREMENTS) foldSeries(series)
      if (request.routeOptions.url === '/graphql' && request.method !== 'OPTIONS') {
        const operation = operationLabel(cost.graphqlOperation ?? 'anonymous')
        operations.inc({ operation, outcome: cost.graphqlOutcome ?? 'refused' })
        if (cost.graphqlCost !== undefined && cost.graphqlOutcome !== 'refused') operationCost.observe({ operation }, cost.graphqlCost)
      }
      // Only an answer with an error code has more to count (no array made for the others).
      if (cost.graphqlErrorCodes !== undefined || cost.errorCode) {
        const codes = cost.graphqlErrorCodes ?? (cost.errorCode ? [cost.errorCode] : [])
        if (cost.graphqlErrorCodes?.includes('RATE_LIMITED')) refusals.inc({ limit: 'graphql_points' })
        else if (cost.errorCode === 'RATE_LIMITED') refusals.inc({ limit: 'requests' })
        for (const code of codes) if (IDEMPOTENCY_CONFLICTS.has(code)) conflicts.inc({ code })
      }
      if (reply.getHeader('idempotent-replayed') === 'true') replays.inc()
    }
    // From request-cost's own onResponse hook, after its log line: no hook of its own per request.
    app.observeAnsweredRequests(record)

    // ---- Read at scrape time ------------------------------------------------------------------
    const database = app.database
    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle); absent on PGlite, which has no pool.',
      labelNames: ['state'],
      registers,
      collect() {
        if (!database.pool) return
        this.set({ state: 'total' }, database.pool.totalCount)
        this.set({ state: 'idle' }, database.pool.idleCount)
      },
    })
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Requests waiting for a pooled PostgreSQL connection; absent on PGlite.',
      registers,
      collect() {
        if (database.pool) this.set(database.pool.waitingCount)
      },
    })
    // Replicas (decisions §15): absent without DATABASE_REPLICA_URLS.
    const { replicas } = app
    if (replicas) {
      new Gauge({
        name: 'db_replica_up',
        help: '1 while a replica serves reads; 0 while it is down or lags past DATABASE_REPLICA_MAX_LAG.',
        labelNames: ['replica', 'state'],
        registers,
        collect() {
          this.reset()
          for (const replica of replicas.status()) this.set({ replica: replica.name, state: replica.state }, replica.state === 'up' ? 1 : 0)
        },
      })
      new Gauge({
        name: 'db_replica_lag_seconds',
        help: 'How far a replica was behind the primary at its last poll (absent before the first answer).',
        labelNames: ['replica'],
        registers,
        collect() {
          this.reset()
          for (const replica of replicas.status()) if (replica.lagSeconds !== null) this.set({ replica: replica.name }, replica.lagSeconds)
        },
      })
      new Counter({
        name: 'db_read_statements_total',
        help: 'Read statements of read requests, by the server that was picked for them (primary or a replica).',
        labelNames: ['server'],
        registers,
        collect() {
          this.reset()
          for (const [server, count] of Object.entries(replicas.reads())) this.inc({ server }, count)
        },
      })
    }
    // Counters kept elsewhere, read at scrape time.
    new Counter({
      name: 'db_connect_timeouts_total',
      help: 'Times a request gave up waiting for a PostgreSQL connection (DB connect timeout, 2 s); always 0 on PGlite.',
      registers,
      collect() {
        this.reset()
        this.inc(database.connectTimeouts())
      },
    })
    const statementTimeouts = new Counter({
      name: 'db_statement_timeouts_total',
      help: 'SQL statements cancelled by DB_STATEMENT_TIMEOUT, or given up on at the deadline of their transaction; PGlite has no statement timeout.',
      registers,
    })
    const stopObserving = database.observeQueries((event) => {
      if (event.level !== 'error') return
      const error = event.error as { code?: unknown } | undefined
      if (error?.code === '57014' || event.error instanceof DatabaseDeadlineExceeded) statementTimeouts.inc()
    })
    app.addHook('onClose', async () => stopObserving())

    const databaseUp = new Gauge({
      name: 'database_up',
      help: "1 when the database answered the scrape's outbox query, else 0.",
      registers,
    })
    const unpublished = new Gauge({
      name: 'outbox_unpublished_events',
      help: 'Events committed but not yet relayed to subscribers.',
      registers,
    })
    const oldestAge = new Gauge({
      name: 'outbox_oldest_unpublished_age_seconds',
      help: 'Age of the oldest unrelayed event (0 when none).',
      registers,
    })
    const readOutbox = async () => {
      try {
        const backlog = await outboxBacklog(app.db)
        databaseUp.set(1)
        unpublished.set(backlog.unpublished)
        oldestAge.set(backlog.oldestAgeSeconds)
      } catch {
        // Unknown while the database is away: the backlog series go stale rather than lie.
        databaseUp.set(0)
      }
    }

    let deliveredAtStart: number | undefined
    app.addHook('onReady', async () => {
      deliveredAtStart = app.eventDelivery?.lastDeliveredSeq()
    })
    new Counter({
      name: 'events_delivered_total',
      help: 'Events this instance handed to its subscribers since it started.',
      registers,
      collect() {
        this.reset()
        if (deliveredAtStart !== undefined) this.inc(app.eventDelivery.lastDeliveredSeq() - deliveredAtStart)
      },
    })
    new Gauge({
      name: 'events_delivery_up',
      help: '1 while this instance can deliver events to its subscribers (see /readyz), else 0.',
      registers,
      collect() {
        this.set(app.eventDelivery?.unavailable() === undefined ? 1 : 0)
      },
    })
    new Gauge({
      name: 'graphql_subscription_connections',
      help: 'Open GraphQL WebSocket connections on this instance.',
      registers,
      collect() {
        this.set(app.websocketServer?.clients.size ?? 0)
      },
    })
    new Gauge({
      name: 'graphql_subscriptions',
      help: 'Active GraphQL subscriptions on this instance, by event topic.',
      labelNames: ['topic'],
      registers,
      collect() {
        const pubsub = app.graphql?.pubsub
        if (!isBoundedPubSub(pubsub)) return
        for (const topic of EVENT_TOPICS) this.set({ topic }, pubsub.subscriptionCount(topic))
      },
    })
    const redisUp = new Gauge({
      name: 'redis_up',
      help: '1 when Redis answers a PING within 250 ms, else 0; absent without REDIS_URL.',
      registers,
    })

    app.get('/metrics', { logLevel: 'warn', config: { rateLimit: false } }, async (request, reply) => {
      if (options.token !== undefined && !bearerMatches(request.headers.authorization, options.token)) {
        return sendProblem(
          reply,
          unauthenticated('GET /metrics requires the METRICS_TOKEN bearer token.', request.headers.authorization !== undefined),
        )
      }
      await readOutbox()
      if (app.redis) redisUp.set((await redisStatus(app.redis)) === 'ok' ? 1 : 0)
      return reply.type(registry.contentType).send(await registry.metrics())
    })
  },
  { name: 'metrics', dependencies: ['db', 'redis', 'request-cost'] },
)
