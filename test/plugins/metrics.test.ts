/**
 * GET /metrics: Prometheus text format, read here with a real parser; it counts the
 * requests made before it, by operationId and never by raw URL; it is never rate limited; it is
 * protected by METRICS_TOKEN when set; and each app has its own registry.
 */
import t from 'tap'
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format'
import { bearer, build, createOrder, gql } from '../helper.ts'

const admin = bearer(1, 'admin')
const METRICS_TOKEN = 'scrape-token-0123456789'

type App = Awaited<ReturnType<typeof build>>

async function scrapeText(app: App, headers: Record<string, string> = {}): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers })
  if (response.statusCode !== 200) throw new Error(`GET /metrics answered ${response.statusCode}`)
  if (!String(response.headers['content-type']).startsWith('text/plain; version=0.0.4')) throw new Error('not the Prometheus text format')
  return response.body
}

async function scrape(app: App, headers: Record<string, string> = {}): Promise<MetricFamily[]> {
  return parsePrometheusTextFormat(await scrapeText(app, headers))
}

/**
 * The histograms' samples as plain series (`…_bucket`, `…_sum`, `…_count`, with their labels).
 * parse-prometheus-text-format folds every label set of a histogram into one (a known limit of
 * that parser), so their TYPE lines are left out and each sample parses as an untyped series.
 */
function histogramSamples(text: string): MetricFamily[] {
  return parsePrometheusTextFormat(
    text
      .split('\n')
      .filter((line) => !(line.startsWith('# TYPE ') && line.endsWith(' histogram')))
      .join('\n'),
  )
}

function family(families: MetricFamily[], name: string): MetricFamily {
  const found = families.find((candidate) => candidate.name === name)
  if (!found) throw new Error(`no ${name} in the scrape`)
  return found
}

/** The value of the sample whose labels include `labels` (0 when there is none). */
function value(families: MetricFamily[], name: string, labels: Record<string, string> = {}): number {
  family(families, name)
  const sample = families
    .filter((candidate) => candidate.name === name)
    .flatMap((candidate) => candidate.metrics)
    .find((metric) => Object.entries(labels).every(([key, wanted]) => metric.labels?.[key] === wanted))
  return Number(sample?.value ?? 0)
}

t.test('/metrics parses as Prometheus text and counts the request made just before', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const before = await scrape(app)
  const counted = { method: 'GET', route: 'getOrder', status: '200' }
  const start = value(before, 'http_requests_total', counted)

  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: admin })).statusCode, 200)
  const text = await scrapeText(app)
  const after = parsePrometheusTextFormat(text)
  t.equal(value(after, 'http_requests_total', counted), start + 1, 'the request is counted under its operationId')
  t.equal(family(after, 'http_requests_total').type, 'COUNTER')
  t.equal(family(after, 'http_request_duration_seconds').type, 'HISTOGRAM')
  const samples = histogramSamples(text)
  t.equal(value(samples, 'http_request_duration_seconds_count', counted), start + 1, 'and its latency observed')
  t.equal(value(samples, 'http_request_duration_seconds_bucket', { ...counted, le: '+Inf' }), start + 1, 'in buckets')
  t.ok(value(samples, 'db_statements_per_request_sum', { route: 'getOrder' }) > 0, 'with the statements it ran')

  // Routes are labelled by operationId or pattern, never by the URL a client chose.
  await app.inject({ method: 'GET', url: '/api/v1/orders/3?x=1', headers: admin })
  await app.inject({ method: 'GET', url: '/definitely/not/here/12345' })
  const routes = new Set(family(await scrape(app), 'http_requests_total').metrics.map((metric) => metric.labels?.route))
  t.ok(routes.has('unmatched'), 'an unknown path is one fixed label')
  t.notOk(
    [...routes].some((route) => route?.includes('12345') || route?.includes('?')),
    `no raw URL among ${[...routes].join(', ')}`,
  )
})

t.test('GraphQL operations are counted by name and outcome, with their cost', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', GRAPHQL_MAX_COST: '50' } })
  const ok = await gql(app, 'query Mine { me { name } }', admin)
  t.equal(ok.statusCode, 200)
  const refused = await gql(app, 'query Big { orders(first: 50) { id items { sku } } }', admin)
  t.equal(refused.json().errors[0].extensions.code, 'COST_LIMIT_EXCEEDED')
  const text = await scrapeText(app)
  const families = parsePrometheusTextFormat(text)
  t.equal(value(families, 'graphql_operations_total', { operation: 'Mine', outcome: 'ok' }), 1)
  t.equal(value(families, 'graphql_operations_total', { operation: 'Big', outcome: 'refused' }), 1)
  const samples = histogramSamples(text)
  t.equal(
    value(samples, 'graphql_operation_cost_points_sum', { operation: 'Mine' }),
    ok.json().extensions.cost.requestedQueryCost,
    'the points charged',
  )
  t.equal(value(samples, 'graphql_operation_cost_points_count', { operation: 'Mine' }), 1)
})

t.test('refusals, idempotency and the state read at scrape time', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', RATE_LIMIT_MAX: '3' } })
  const create = { method: 'POST' as const, url: '/api/v1/orders', payload: { items: [{ sku: 'KB-101', qty: 1 }] } }
  const first = await app.inject({ ...create, headers: { ...admin, 'idempotency-key': 'metrics-1' } })
  t.equal(first.statusCode, 201)
  const replay = await app.inject({ ...create, headers: { ...admin, 'idempotency-key': 'metrics-1' } })
  t.equal(replay.headers['idempotent-replayed'], 'true')
  const reused = await app.inject({
    ...create,
    payload: { items: [{ sku: 'KB-101', qty: 2 }] },
    headers: { ...admin, 'idempotency-key': 'metrics-1' },
  })
  t.equal(reused.json().code, 'IDEMPOTENCY_KEY_REUSED')
  const limited = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: admin })
  t.equal(limited.statusCode, 429)

  // Scrapes are never limited, however many.
  let families: MetricFamily[] = []
  for (let i = 0; i < 5; i++) families = await scrape(app)
  t.equal(value(families, 'idempotency_replays_total'), 1)
  t.equal(value(families, 'idempotency_conflicts_total', { code: 'IDEMPOTENCY_KEY_REUSED' }), 1)
  t.equal(value(families, 'rate_limit_refusals_total', { limit: 'requests' }), 1)
  t.equal(value(families, 'database_up'), 1)
  // The order just created is in the outbox, not yet relayed (this instance does not relay).
  t.ok(value(families, 'outbox_unpublished_events') >= 1, 'the outbox backlog')
  t.ok(value(families, 'outbox_oldest_unpublished_age_seconds') >= 0)
  for (const name of [
    'events_delivered_total',
    'events_delivery_up',
    'graphql_subscription_connections',
    'graphql_subscriptions',
    'db_connect_timeouts_total',
    'db_statement_timeouts_total',
  ]) {
    t.ok(family(families, name), `${name} is exported`)
  }
  if (app.database.pool) {
    t.ok(value(families, 'db_pool_connections', { state: 'total' }) >= 1, 'the pool on PostgreSQL')
    t.ok(family(families, 'db_pool_waiting_requests'))
  }
})

t.test('a refusal by the GraphQL points bucket is counted apart from the request rate', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', GRAPHQL_COST_BUCKET: '20' } })
  const refused = await gql(app, 'query Costly { orders(first: 50) { id } }', admin)
  t.equal(refused.statusCode, 429)
  t.equal(refused.json().errors[0].extensions.code, 'RATE_LIMITED')
  const families = await scrape(app)
  t.equal(value(families, 'rate_limit_refusals_total', { limit: 'graphql_points' }), 1)
  t.equal(value(families, 'rate_limit_refusals_total', { limit: 'requests' }), 0)
  t.equal(value(families, 'graphql_operations_total', { operation: 'Costly', outcome: 'refused' }), 1)
})

t.test('events delivered and the outbox backlog follow the relay', async (t) => {
  const app = await build(t)
  const before = app.eventDelivery.lastDeliveredSeq()
  const created = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], admin)
  t.equal(created.statusCode, 201)
  // The relay and delivery run in the background (NOTIFY, else the one-second poll): wait for them.
  while (app.eventDelivery.lastDeliveredSeq() === before) await new Promise((resolve) => setTimeout(resolve, 20))
  const families = await scrape(app)
  t.equal(
    value(families, 'events_delivered_total'),
    app.eventDelivery.lastDeliveredSeq() - before,
    'the events this instance delivered since it started',
  )
  t.equal(family(families, 'events_delivered_total').type, 'COUNTER')
  t.equal(value(families, 'events_delivery_up'), 1)
})

t.test('METRICS_TOKEN protects /metrics', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false', METRICS_TOKEN } })
  const none = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(none.statusCode, 401)
  t.equal(none.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.match(none.headers['www-authenticate'], /^Bearer/)
  t.equal(
    (await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong-token-0123456789' } })).statusCode,
    401,
  )
  t.equal((await app.inject({ method: 'GET', url: '/metrics', headers: admin })).statusCode, 401, 'an API token is not the metrics token')
  t.ok(
    value(await scrape(app, { authorization: `Bearer ${METRICS_TOKEN}` }), 'http_requests_total', { route: '/metrics', status: '401' }) >=
      3,
  )
})

t.test('two apps in one process keep their own registries', async (t) => {
  const one = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const two = await build(t, { env: { EVENTS_RELAY: 'false' } })
  await one.inject({ method: 'GET', url: '/healthz' })
  await one.inject({ method: 'GET', url: '/healthz' })
  t.equal(value(await scrape(one), 'http_requests_total', { route: '/healthz' }), 2)
  t.equal(value(await scrape(two), 'http_requests_total', { route: '/healthz' }), 0, 'the other app counted nothing')
})
