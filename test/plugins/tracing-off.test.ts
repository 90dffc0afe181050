/**
 * Tracing is off unless configured: then no OpenTelemetry SDK or instrumentation module
 * is even loaded and no instrumentation is registered, so tracing costs nothing. (The no-op
 * OpenTelemetry API package is loaded regardless: prom-client requires it for exemplars.) This
 * file imports nothing of OpenTelemetry itself; a module resolve hook records every module the
 * process imports after it is registered, which is before any app is built.
 */
import t from 'tap'
import { createRequire, register } from 'node:module'
import { MessageChannel } from 'node:worker_threads'
import { buildApp } from '../../src/app.ts'
import { bearer, createTestDatabase, gql, testConfig } from '../helper.ts'

/** Anything of OpenTelemetry but its no-op API. */
const OTEL = /\/node_modules\/(@opentelemetry\/(?!api\/)[^/]+|@fastify\/otel)\//

const resolved: string[] = []
const waiters: Array<{ pattern: RegExp; resolve: () => void }> = []
const { port1, port2 } = new MessageChannel()
port1.on('message', (url: string) => {
  resolved.push(url)
  for (const waiter of waiters) if (waiter.pattern.test(url)) waiter.resolve()
})
port1.unref()
const hooks = `
let port
export function initialize(data) { port = data.port }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  port.postMessage(result.url)
  return result
}`
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: port2 }, transferList: [port2] })
const loadedByRequire = () => Object.keys(createRequire(import.meta.url).cache).filter((path) => OTEL.test(path))

t.test('with tracing off, no OpenTelemetry module is loaded and no instrumentation registered', async (t) => {
  const config = testConfig({ EVENTS_RELAY: 'false' })
  t.equal(config.tracing.exporter, undefined, 'off by default')
  const app = await buildApp({ config, database: await createTestDatabase(t) })
  t.teardown(() => app.close())
  t.equal(app.tracing, undefined)
  t.notMatch(app.printPlugins(), /otel/i, 'no @fastify/otel plugin')
  const responses = [
    await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: bearer(1, 'admin') }),
    await gql(app, '{ user(id: 2) { orders(last: 10) { items { sku product { name } } } } }', bearer(2, 'orders:read')),
  ]
  t.same(
    responses.map((response) => response.statusCode),
    [200, 200],
  )
  t.notOk(
    responses.some((response) => response.headers.traceparent),
    'no trace context in responses',
  )
  t.same(loadedByRequire(), [], 'no OpenTelemetry SDK module in the require cache')
  // The hook reports asynchronously: a module resolved after the app started is reported before
  // this one, which is resolved last.
  const sentinel = new Promise<void>((resolve) => waiters.push({ pattern: /node_modules\/prom-client\/index\.js$/, resolve }))
  await import('prom-client')
  await sentinel
  t.same(
    resolved.filter((url) => OTEL.test(url)),
    [],
    'and none was ever resolved through import',
  )
})

t.test('the check above can fail: an app with tracing on loads the SDK, and that is seen', async (t) => {
  const seen = new Promise<void>((resolve) => waiters.push({ pattern: OTEL, resolve }))
  const app = await buildApp({
    config: testConfig({ EVENTS_RELAY: 'false', OTEL_TRACES_EXPORTER: 'console' }),
    database: await createTestDatabase(t),
  })
  t.teardown(() => app.close())
  t.ok(app.tracing, 'tracing is on')
  await seen
  t.ok(
    resolved.some((url) => OTEL.test(url)),
    'the resolve hook saw it',
  )
  t.ok(loadedByRequire().length > 0, 'and so does the require cache')
})
