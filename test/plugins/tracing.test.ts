/**
 * Traces: with a span exporter, `user { orders { items { product } } }` is traced as
 * POST /graphql › handler › graphql.parse/validate/execute › one span per loader batch (not per parent)
 * › one span per SQL statement.
 */
import t from 'tap'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { buildApp } from '../../src/app.ts'
import { bearer, createTestDatabase, gql, testConfig } from '../helper.ts'

// The owner under the orders keeps User.orders a loader batch: without it, Query.user's plan
// reads the orders in the user's own statement (test/graphql/plans.test.ts).
const QUERY = '{ user(id: 2) { name orders(last: 10) { id user { name } items { sku product { name } } } } }'

function tree(spans: ReadableSpan[]) {
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]))
  const parentOf = (span: ReadableSpan) => byId.get(span.parentSpanContext?.spanId ?? '')
  const children = (parent: ReadableSpan) => spans.filter((span) => parentOf(span) === parent)
  const named = (name: string | RegExp) => spans.filter((span) => (typeof name === 'string' ? span.name === name : name.test(span.name)))
  return { parentOf, children, named }
}

t.test('the span tree of user { orders { items { product } } }: one span per loader batch, SQL under them', async (t) => {
  let statements = 0
  const database = await createTestDatabase(t, { onQuery: () => void statements++ })
  const exporter = new InMemorySpanExporter()
  const app = await buildApp({ config: testConfig({ EVENTS_RELAY: 'false' }), database, spanExporter: exporter })
  t.teardown(() => app.close())

  exporter.reset()
  statements = 0
  const response = await gql(app, { query: QUERY }, bearer(2, 'orders:read'))
  t.equal(response.statusCode, 200)
  const orders = response.json().data.user.orders as Array<{ items: unknown[] }>
  t.ok(orders.length >= 2, `several orders (${orders.length})`)
  t.ok(orders.flatMap((order) => order.items).length >= 3, 'several items, in several orders')

  const spans = exporter.getFinishedSpans()
  const { parentOf, children, named } = tree(spans)
  const [request] = named('POST /graphql')
  t.ok(request, 'a span for the HTTP request')
  t.equal(parentOf(request!), undefined, 'at the root')
  t.equal(request!.attributes['http.route'], '/graphql')

  const [execute] = named('graphql.execute')
  t.ok(execute, 'graphql.execute')
  t.equal(named('graphql.parse').length, 1, 'graphql.parse')
  t.equal(named('graphql.validate').length, 1, 'graphql.validate')
  // All three under the handler span of the request.
  for (const phase of ['graphql.parse', 'graphql.validate', 'graphql.execute']) {
    t.equal(parentOf(parentOf(named(phase)[0]!)!), request, `${phase} is inside the request`)
  }

  const orderBatches = named('loader User.orders')
  const productBatches = named('loader Item.product')
  t.equal(orderBatches.length, 1, 'one User.orders batch')
  t.equal(productBatches.length, 1, 'one Item.product batch for the items of every order')
  t.equal(parentOf(orderBatches[0]!), execute, 'batches are under graphql.execute')
  t.equal(parentOf(productBatches[0]!), execute)
  t.equal(
    productBatches[0]!.attributes['graphql.loader.batch_size'],
    orders.flatMap((order) => order.items).length,
    'the batch carries every item',
  )

  const sql = spans.filter((span) => span.attributes['db.query.text'] !== undefined)
  t.equal(sql.length, statements, 'one span per statement the database ran')
  for (const batch of [...orderBatches, ...productBatches]) {
    t.ok(
      children(batch).some((span) => span.attributes['db.query.text'] !== undefined),
      `${batch.name} has its SQL under it`,
    )
  }
  t.ok(
    children(execute!).some((span) => span.attributes['db.query.text'] !== undefined),
    "the root field's SQL is under graphql.execute",
  )
  t.ok(
    sql.every((span) => [execute, ...orderBatches, ...productBatches].includes(parentOf(span))),
    'no SQL span outside the operation',
  )
  t.equal(new Set(spans.map((span) => span.spanContext().traceId)).size, 1, 'one trace')
})

t.test('a traceparent sent by the caller is continued', async (t) => {
  const database = await createTestDatabase(t)
  const exporter = new InMemorySpanExporter()
  const app = await buildApp({ config: testConfig({ EVENTS_RELAY: 'false' }), database, spanExporter: exporter })
  t.teardown(() => app.close())
  const traceId = '0af7651916cd43dd8448eb211c80319c'
  await app.inject({
    method: 'GET',
    url: '/api/v1/orders/3',
    headers: { ...bearer(1, 'admin'), traceparent: `00-${traceId}-b7ad6b7169203331-01` },
  })
  const [request] = exporter.getFinishedSpans().filter((span) => span.name === 'GET /api/v1/orders/{id}')
  t.equal(request?.spanContext().traceId, traceId)
})
