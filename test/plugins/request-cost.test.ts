/**
 * What each request cost: Server-Timing reports the statements a request ran, counted
 * where they run, and they are the very statements the batching tests count through the database's
 * statement log; and each request leaves exactly one log line at info (error only for a 5xx) with
 * its method, operationId, status, duration, statement count, caller and error code, never a token.
 */
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { bearer, build, createOrder, gql, testConfig } from '../helper.ts'
import { captureLog } from '../log-capture.ts'
import { insertLoadUsers } from '../load-users.ts'

const admin = bearer(1, 'admin')

function timing(header: unknown): { statements: number; dbMs: number; totalMs: number; cost: number | undefined } {
  const text = String(header)
  const db = /(?:^|, )db;dur=([\d.]+);desc="(\d+) statements?"/.exec(text)
  const total = /(?:^|, )total;dur=([\d.]+)/.exec(text)
  const cost = /(?:^|, )cost;desc="(\d+) points"/.exec(text)
  if (!db || !total) throw new Error(`not the Server-Timing expected: ${text}`)
  return { statements: Number(db[2]), dbMs: Number(db[1]), totalMs: Number(total[1]), cost: cost ? Number(cost[1]) : undefined }
}

t.test('Server-Timing counts the statements the batching tests count, for the same queries', async (t) => {
  let counted = 0
  // The batching tests' set-up (test/graphql/batching.test.ts): 60 more users with two orders each.
  const app = await build(t, {
    onQuery: () => void counted++,
    env: { GRAPHQL_MAX_COST: '100000', GRAPHQL_COST_BUCKET: '1000000', EVENTS_RELAY: 'false' },
  })
  await insertLoadUsers(app.db)

  const queries = [
    ...[1, 10, 50].map((first) => `{ orders(first: ${first}) { id user { name company { name } } items { sku qty } } }`),
    ...[1, 10, 50].map((first) => `{ users(first: ${first}) { id orders(last: 10) { id items { sku } } } }`),
  ]
  for (const query of queries) {
    counted = 0
    const response = await gql(app, query, admin)
    t.equal(response.statusCode, 200)
    t.notOk(response.json().errors, 'no error')
    const reported = timing(response.headers['server-timing'])
    t.equal(reported.statements, counted, `${query}: ${counted} statements`)
    t.ok(counted > 0, 'the query did read the database')
    t.equal(reported.cost, response.json().extensions.cost.requestedQueryCost, 'cost is the points charged')
    t.ok(reported.dbMs <= reported.totalMs, 'database time is part of the total')
  }

  // REST too, a write included (its transaction's begin and commit are statements as well).
  for (const request of [
    { method: 'GET' as const, url: '/api/v1/orders?limit=20' },
    { method: 'GET' as const, url: '/api/v1/orders/3' },
    { method: 'POST' as const, url: '/api/v1/orders', payload: { items: [{ sku: 'KB-101', qty: 1 }] } },
  ]) {
    counted = 0
    const response = await app.inject({ ...request, headers: admin })
    t.ok(response.statusCode < 300, `${request.method} ${request.url}`)
    const reported = timing(response.headers['server-timing'])
    t.equal(reported.statements, counted, `${request.method} ${request.url}: ${counted} statements`)
    t.equal(reported.cost, undefined, 'no points outside GraphQL')
  }
})

t.test('statements are counted per request, also when requests overlap', async (t) => {
  let counted = 0
  const app = await build(t, { onQuery: () => void counted++, env: { EVENTS_RELAY: 'false' } })
  const single = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: admin })
  const one = timing(single.headers['server-timing']).statements
  t.equal(one, counted)
  const responses = await Promise.all(
    Array.from({ length: 8 }, () => app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: admin })),
  )
  for (const response of responses)
    t.equal(timing(response.headers['server-timing']).statements, one, 'each reports its own statements only')
  const unmatched = await app.inject({ method: 'GET', url: '/no/such/path' })
  t.equal(timing(unmatched.headers['server-timing']).statements, 0, 'a 404 ran none')
})

t.test('one log line per request at info, with its cost, caller and error code, never the token', async (t) => {
  const log = captureLog()
  const app = await build(t, { env: { LOG_LEVEL: 'info' }, loggerStream: log.stream })
  const token = admin.authorization.slice('Bearer '.length)
  await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: { ...admin, 'x-request-id': 'one' } })
  await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: { 'x-request-id': 'two' } })
  await createOrder(app, [{ sku: 'NOPE-1', qty: 1 }], { ...admin, 'x-request-id': 'three' })
  await gql(app, '{ order(id: 3) { id items { sku } } }', { ...admin, 'x-request-id': 'four' })

  const lines = (id: string) => log.lines.filter((line) => line.requestId === id)
  for (const id of ['one', 'two', 'three', 'four']) {
    t.equal(lines(id).filter((line) => line.msg === 'request completed').length, 1, `exactly one request line for ${id}`)
    t.notOk(
      lines(id).some((line) => line.msg === 'incoming request'),
      "Fastify's own request lines are off",
    )
  }
  const [one] = lines('one')
  t.match(one, {
    level: 30,
    method: 'GET',
    route: 'getOrder',
    status: 200,
    caller: '1',
    statements: Number,
    durationMs: Number,
    dbMs: Number,
  })
  t.ok((one!.statements as number) > 0)
  const [two] = lines('two')
  t.match(
    two,
    { level: 30, route: 'getOrder', status: 401, code: 'UNAUTHENTICATED', statements: 0 },
    'a client error is info, with its code',
  )
  t.equal(two!.caller, undefined, 'no caller without a credential')
  const three = lines('three').find((line) => line.msg === 'request completed')
  t.match(three, { level: 30, route: 'createOrder', status: 422, code: 'UNKNOWN_SKU' })
  const four = lines('four').find((line) => line.msg === 'request completed')
  t.match(four, { level: 30, route: '/graphql', status: 200, graphql: { operation: 'anonymous', outcome: 'ok', cost: Number } })
  t.notOk(
    log.lines.some((line) => JSON.stringify(line).includes(token)),
    'the token is never logged',
  )
})

t.test('a 5xx is logged at error', async (t) => {
  const log = captureLog()
  // An app on an embedded database of its own (whatever DATABASE_URL says), which is then closed
  // under it: requests answer 503.
  const app = await buildApp({
    config: testConfig({ DATABASE_URL: 'memory://', LOG_LEVEL: 'info', EVENTS_RELAY: 'false' }),
    loggerStream: log.stream,
  })
  t.teardown(() => app.close())
  await app.database.pglite!.close()
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: { ...admin, 'x-request-id': 'down' } })
  t.equal(response.statusCode, 503)
  const line = log.lines.find((entry) => entry.requestId === 'down' && entry.msg === 'request completed')
  t.match(line, { level: 50, status: 503, code: 'DATABASE_UNAVAILABLE' })
})
