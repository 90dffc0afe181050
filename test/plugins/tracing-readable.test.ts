/**
 * Traces an operator can read, with the in-memory exporter: root spans are
 * named by method and route template, no span name or attribute carries a file path or source
 * text, a 4xx is not an error on the server span (OpenTelemetry's HTTP conventions: only a 5xx
 * is), background work (the outbox relay, a webhook delivery pass) is a trace of its own rather
 * than part of the request whose write woke it, and log lines carry the trace and span ids.
 */
import t, { type Test } from 'tap'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import type { InjectOptions } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { bearer, createOrder, createTestDatabase, gql, testConfig } from '../helper.ts'
import { captureLog } from '../log-capture.ts'
import { answer, createEndpoint, startReceiver } from '../modules/webhooks/receiver.ts'

/** Generous for a loaded 2-core machine; running out is a failure. */
const WAIT_MS = 20_000

async function tracedApp(t: Test, env: Record<string, string> = {}, loggerStream?: { write(line: string): void }) {
  const database = await createTestDatabase(t)
  const exporter = new InMemorySpanExporter()
  const app = await buildApp({
    config: testConfig({ EVENTS_RELAY: 'false', ...env }),
    database,
    spanExporter: exporter,
    ...(loggerStream ? { loggerStream } : {}),
  })
  t.teardown(() => app.close())
  return { app, exporter, database }
}

const roots = (spans: ReadableSpan[]) => spans.filter((span) => span.parentSpanContext === undefined)
const inTrace = (spans: ReadableSpan[], root: ReadableSpan) =>
  spans.filter((span) => span.spanContext().traceId === root.spanContext().traceId)

async function waitFor<T>(what: string, find: () => T | undefined): Promise<T> {
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`waited ${WAIT_MS} ms for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

t.test('root spans are named by method and route template; a path no route matches is the method alone', async (t) => {
  const { app, exporter } = await tracedApp(t)
  const requests = [
    { method: 'GET', url: '/api/v1/orders/3', headers: bearer(1, 'admin'), name: 'GET /api/v1/orders/{id}', route: '/api/v1/orders/{id}' },
    {
      method: 'GET',
      url: '/api/v1/orders?limit=2',
      headers: bearer(2),
      name: 'GET /api/v1/orders',
      route: '/api/v1/orders',
    },
    {
      method: 'POST',
      url: '/api/v1/orders',
      headers: bearer(2),
      payload: { items: [{ sku: 'KB-101', qty: 1 }] },
      name: 'POST /api/v1/orders',
      route: '/api/v1/orders',
    },
    {
      method: 'POST',
      url: '/graphql',
      headers: bearer(2, 'orders:read'),
      payload: { query: '{ me { id } }' },
      name: 'POST /graphql',
      route: '/graphql',
    },
    { method: 'GET', url: '/api/v1/nowhere/7', headers: bearer(2), name: 'GET', route: undefined },
  ] as const
  for (const { name, route, ...request } of requests) {
    exporter.reset()
    const response = await app.inject(request)
    t.ok(response.statusCode < 500, `${request.method} ${request.url} answered ${response.statusCode}`)
    const [root, ...others] = roots(exporter.getFinishedSpans())
    t.same(others, [], `${request.method} ${request.url}: one root span`)
    t.equal(root?.name, name, `${request.method} ${request.url} is traced as "${name}"`)
    t.equal(root?.kind, SpanKind.SERVER)
    t.equal(root?.attributes['http.route'], route, 'http.route is the template')
    t.equal(root?.attributes['url.path'], request.url.split('?')[0], 'url.path is the path, without the query')
  }
  exporter.reset()
  await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: bearer(1, 'admin') })
  const handler = exporter.getFinishedSpans().find((span) => span.attributes['fastify.type'] === 'request-handler')
  t.equal(handler?.name, 'handler getOrder', "the handler's span is named after the operationId")
  exporter.reset()
  await gql(app, '{ me { id } }', bearer(2, 'orders:read'))
  const graphqlHandler = exporter.getFinishedSpans().find((span) => span.attributes['fastify.type'] === 'request-handler')
  t.equal(graphqlHandler?.name, 'handler /graphql', "GraphQL's handler span is named after its route")
})

t.test('no span name or attribute carries a file path or source text', async (t) => {
  const { app, exporter } = await tracedApp(t)
  await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: bearer(1, 'admin') })
  await app.inject({ method: 'GET', url: '/api/v1/orders/999999', headers: bearer(1, 'admin') })
  await app.inject({ method: 'GET', url: '/api/v1/orders/abc', headers: bearer(1, 'admin') })
  await app.inject({ method: 'GET', url: '/api/v1/orders' })
  await createOrder(app, [{ sku: 'KB-101', qty: 1 }], bearer(2))
  await gql(app, '{ me { id } }', bearer(2, 'orders:read'))
  await gql(app, '{ nope }', bearer(2, 'orders:read'))
  await app.inject({ method: 'GET', url: '/graphql?query=%7B%20me%20%7B%20id%20%7D%20%7D', headers: bearer(2, 'orders:read') })
  await app.inject({ method: 'GET', url: '/nowhere' })
  const spans = exporter.getFinishedSpans()
  t.ok(spans.length > 20, `spans of every kind (${spans.length})`)
  // A path of this checkout, a module's file, or source text (an arrow, a call, a function).
  const leak = new RegExp(
    [process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'node_modules', '\\.[cm]?[jt]s\\b', '=>', 'function\\b', '\\w\\('].join('|'),
  )
  const leaks: string[] = []
  for (const span of spans) {
    if (leak.test(span.name)) leaks.push(`name: ${span.name}`)
    for (const [key, value] of Object.entries(span.attributes)) {
      // SQL is what db.query.text is for.
      if (key === 'db.query.text') continue
      if (leak.test(String(value))) leaks.push(`${span.name} ${key}: ${String(value)}`)
    }
  }
  t.same(leaks, [], 'none')
})

t.test('a 4xx leaves the server span unset, a 5xx marks it ERROR (OpenTelemetry HTTP conventions)', async (t) => {
  const { app, exporter, database } = await tracedApp(t)
  const answers: Array<[number, InjectOptions]> = [
    [404, { method: 'GET', url: '/api/v1/orders/999999', headers: bearer(1, 'admin') }],
    [400, { method: 'GET', url: '/api/v1/orders/abc', headers: bearer(1, 'admin') }],
    [401, { method: 'GET', url: '/api/v1/orders' }],
    [403, { method: 'POST', url: '/api/v1/orders', headers: bearer(2, 'orders:read'), payload: { items: [{ sku: 'KB-101', qty: 1 }] } }],
    [422, { method: 'POST', url: '/api/v1/orders', headers: bearer(2), payload: { items: [{ sku: 'NO-SUCH-SKU', qty: 1 }] } }],
    [401, { method: 'POST', url: '/graphql', payload: { query: '{ me { id } }' } }],
    [
      400,
      {
        method: 'POST',
        url: '/graphql',
        headers: { ...bearer(2), accept: 'application/graphql-response+json' },
        payload: { query: '{ me { ' },
      },
    ],
  ]
  for (const [status, request] of answers) {
    exporter.reset()
    const response = await app.inject(request)
    t.equal(response.statusCode, status, `${request.method} ${request.url} answers ${status}`)
    const spans = exporter.getFinishedSpans()
    const [root] = roots(spans)
    t.equal(root?.attributes['http.response.status_code'], status)
    t.equal(root?.status.code, SpanStatusCode.UNSET, `${status}: the server span is not an error`)
    const errors = spans.filter((span) => span.status.code === SpanStatusCode.ERROR).map((span) => span.name)
    t.same(errors, [], `${status}: nor any span under it`)
    t.same(
      spans.flatMap((span) => span.events.filter((event) => event.name === 'exception').map(() => span.name)),
      [],
      `${status}: and no exception (with a stack trace) is recorded for the caller's mistake`,
    )
  }

  // The database gone: the service's fault, a 5xx, and an error on the server span.
  await database.close()
  exporter.reset()
  const failed = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: bearer(1, 'admin') })
  t.ok(failed.statusCode >= 500, `with the database closed, ${failed.statusCode}`)
  const [root] = roots(exporter.getFinishedSpans())
  t.equal(root?.status.code, SpanStatusCode.ERROR, 'the 5xx is an error on the server span')
  const handler = exporter.getFinishedSpans().find((span) => span.attributes['fastify.type'] === 'request-handler')
  t.equal(handler?.status.code, SpanStatusCode.ERROR, "and on the handler's span")
  t.ok(
    handler?.events.some((event) => event.name === 'exception'),
    'with the exception',
  )
})

t.test('the outbox relay is a trace of its own, never part of the request whose write woke it', async (t) => {
  const { app, exporter } = await tracedApp(t, { EVENTS_RELAY: 'true' })
  // Whatever the start-up relay did is not this test's.
  await new Promise((resolve) => setTimeout(resolve, 200))
  exporter.reset()
  const created = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], bearer(2))
  t.equal(created.statusCode, 201)
  const relay = await waitFor('the relay span', () => exporter.getFinishedSpans().find((span) => span.name === 'events.relay'))
  const spans = exporter.getFinishedSpans()
  const request = roots(spans).find((span) => span.name === 'POST /api/v1/orders')
  t.ok(request, 'the request is traced')
  t.equal(relay.parentSpanContext, undefined, 'the relay span is a root')
  t.not(relay.spanContext().traceId, request?.spanContext().traceId, 'in a trace of its own')
  t.equal(relay.attributes['events.relayed'], 1, 'it relayed the order.created event')
  const relayStatements = inTrace(spans, relay).filter((span) => span.attributes['db.query.text'] !== undefined)
  t.ok(
    relayStatements.some((span) => /update outbox set seq/.test(String(span.attributes['db.query.text']))),
    "the relay's statements are under it",
  )
  t.ok(
    relayStatements.every((span) => span.parentSpanContext?.spanId === relay.spanContext().spanId),
    'directly',
  )
  const requestStatements = inTrace(spans, request!).map((span) => String(span.attributes['db.query.text'] ?? ''))
  t.notOk(
    requestStatements.some((sql) => /outbox set seq|pg_try_advisory_xact_lock/.test(sql)),
    'and none of them is in the request’s trace',
  )

  // The relay polls every second: a poll that finds nothing leaves no span.
  await new Promise((resolve) => setTimeout(resolve, 2500))
  t.equal(exporter.getFinishedSpans().filter((span) => span.name === 'events.relay').length, 1, 'idle polls make no span')
})

t.test('a webhook delivery pass is a trace of its own that counts its attempts; a refused attempt is no error', async (t) => {
  const { app, exporter } = await tracedApp(t, {
    EVENTS_RELAY: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL: '20ms',
    WEBHOOK_RETRY_SCHEDULE: '100ms',
  })
  const receiver = await startReceiver(t, answer(500))
  const endpoint = await createEndpoint(app, receiver.url)
  await new Promise((resolve) => setTimeout(resolve, 200))
  exporter.reset()
  const published = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: bearer(3, 'articles:write'),
    payload: { title: 'Traced', body: 'Delivered in a span of its own.' },
  })
  t.equal(published.statusCode, 201)
  await receiver.waitFor(1, WAIT_MS)
  const passes = (outcome: 'failed' | 'succeeded') =>
    exporter
      .getFinishedSpans()
      .filter((span) => span.name === 'webhooks.deliver' && Number(span.attributes[`webhook.deliveries.${outcome}`]) > 0)
  const refused = await waitFor('a pass whose attempt was answered 500', () => passes('failed')[0])
  receiver.setBehaviour(answer(204))
  const delivered = await waitFor('a pass that delivered', () => passes('succeeded')[0])

  const request = roots(exporter.getFinishedSpans()).find((span) => span.name === 'POST /api/v1/articles')
  t.ok(request, 'the request is traced')
  for (const [pass, what] of [
    [refused, 'refused'],
    [delivered, 'delivered'],
  ] as const) {
    t.equal(pass.parentSpanContext, undefined, `the ${what} pass is a root span`)
    t.not(pass.spanContext().traceId, request?.spanContext().traceId, 'in a trace of its own')
    t.equal(pass.attributes['webhook.endpoint.id'], endpoint.id, 'naming the endpoint')
    t.equal(pass.status.code, SpanStatusCode.UNSET, "a receiver's refusal is not the service's error")
  }
  t.match(refused.attributes, { 'webhook.deliveries.failed': 1, 'webhook.deliveries.succeeded': 0 })
  t.match(delivered.attributes, { 'webhook.deliveries.succeeded': 1, 'webhook.deliveries.failed': 0 })
  t.notOk(
    inTrace(exporter.getFinishedSpans(), request!).some((span) => span.name === 'webhooks.deliver'),
    'and no pass is in the request’s trace',
  )

  // The worker wakes every 20 ms: a pass with nothing due leaves no span.
  const before = exporter.getFinishedSpans().filter((span) => span.name === 'webhooks.deliver').length
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.equal(exporter.getFinishedSpans().filter((span) => span.name === 'webhooks.deliver').length, before, 'idle passes make no span')
})

t.test('log lines carry trace_id and span_id while tracing is on, and not while it is off', async (t) => {
  const log = captureLog()
  const { app, exporter } = await tracedApp(t, { LOG_LEVEL: 'info' }, log.stream)
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: bearer(1, 'admin') })
  const line = log.lines.find((entry) => entry.requestId === response.headers['x-request-id'] && entry.msg === 'request completed')
  t.ok(line, 'the request has its line')
  const trace = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === line?.trace_id)
  t.ok(trace.length > 0, "trace_id is the request's trace")
  t.ok(
    trace.some((span) => span.spanContext().spanId === line?.span_id),
    'span_id is one of its spans',
  )

  const untraced = captureLog()
  const off = await buildApp({
    config: testConfig({ EVENTS_RELAY: 'false', LOG_LEVEL: 'info' }),
    database: await createTestDatabase(t),
    loggerStream: untraced.stream,
  })
  t.teardown(() => off.close())
  await off.inject({ method: 'GET', url: '/api/v1/orders/3', headers: bearer(1, 'admin') })
  const plain = untraced.lines.find((entry) => entry.msg === 'request completed')
  t.ok(plain, 'the untraced app logs the request')
  t.notOk(plain && ('trace_id' in plain || 'span_id' in plain), 'without trace fields')
})
