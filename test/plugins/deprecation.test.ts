/**
 * Deprecation at run time (decisions §13, "Contract evolution"). No REST operation is deprecated in
 * openapi.yaml today, and the app takes the contract it is built from (buildApp's `contracts`), so these
 * tests deprecate one in an edited copy: it answers with Deprecation (RFC 9745), Sunset (RFC 8594) and a
 * successor-version Link, every call is counted in /metrics and logged once per caller. The SDL's real
 * @deprecated fields (`Order.cursor`) are counted and logged the same way.
 */
import t from 'tap'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { loadContracts, type Contracts } from '../../src/contract/contracts.ts'
import { deprecatedOperations } from '../../src/contract/deprecated-operations.ts'
import { oncePerPeriod } from '../../src/plugins/deprecation.ts'
import { captureLog } from '../log-capture.ts'
import { bearer, build, gql } from '../helper.ts'

type App = Awaited<ReturnType<typeof build>>
type OperationPatch = Record<string, unknown>

/** openapi.yaml with `patch` merged into the operation `operationId`. */
function contractsWith(operationId: string, patch: OperationPatch): Contracts {
  const contracts = loadContracts()
  const document = structuredClone(contracts.openApiDocument) as { paths: Record<string, Record<string, { operationId?: string }>> }
  const operation = Object.values(document.paths)
    .flatMap((item) => Object.values(item))
    .find((candidate) => candidate.operationId === operationId)
  if (!operation) throw new Error(`no operation ${operationId}`)
  Object.assign(operation, patch)
  return { ...contracts, openApiDocument: document }
}

const DEPRECATED_ITEMS = {
  deprecated: true,
  'x-deprecated-at': '2026-11-01',
  'x-sunset': '2027-06-30',
  'x-deprecated-by': 'getOrder',
}

async function deprecatedUses(app: App, name: string, labels: Record<string, string>): Promise<number> {
  const response = await app.inject({ method: 'GET', url: '/metrics' })
  const family = parsePrometheusTextFormat(response.body).find((candidate) => candidate.name === name)
  if (!family) throw new Error(`no ${name} in the scrape`)
  const sample = family.metrics.find((metric) => Object.entries(labels).every(([key, wanted]) => metric.labels?.[key] === wanted))
  return Number(sample?.value ?? 0)
}

const warnings = (lines: ReturnType<typeof captureLog>['lines']) => lines.filter((line) => line.deprecated !== undefined)

t.test('a deprecated operation answers with Deprecation, Sunset and a successor-version Link; others with none', async (t) => {
  const app = await build(t, { contracts: contractsWith('listOrderItems', DEPRECATED_ITEMS) })
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders/1/items', headers: bearer(2) })
  t.equal(response.statusCode, 200)
  t.equal(response.headers.deprecation, `@${Date.UTC(2026, 10, 1) / 1000}`, 'RFC 9745: an sf-date, seconds since the epoch')
  t.equal(response.headers.sunset, 'Wed, 30 Jun 2027 00:00:00 GMT', 'RFC 8594: an HTTP-date')
  t.equal(response.headers.link, '</api/v1/orders/1>; rel="successor-version"', "the replacement, with this request's path parameters")

  // Refused calls say it too: a client learns of the deprecation whatever it sent.
  const refused = await app.inject({ method: 'GET', url: '/api/v1/orders/1/items' })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers.deprecation, `@${Date.UTC(2026, 10, 1) / 1000}`)

  const current = await app.inject({ method: 'GET', url: '/api/v1/orders/1', headers: bearer(2) })
  t.equal(current.statusCode, 200)
  t.equal(current.headers.deprecation, undefined)
  t.equal(current.headers.sunset, undefined)
  t.equal(current.headers.link, undefined)
})

t.test('without x-sunset or x-deprecated-by only Deprecation is sent', async (t) => {
  const app = await build(t, { contracts: contractsWith('listProducts', { deprecated: true, 'x-deprecated-at': '2026-12-01T12:00:00Z' }) })
  const response = await app.inject({ method: 'GET', url: '/api/v1/products', headers: bearer(2) })
  t.equal(response.statusCode, 200)
  t.equal(response.headers.deprecation, `@${Date.UTC(2026, 11, 1, 12) / 1000}`)
  t.equal(response.headers.sunset, undefined)
  t.equal(response.headers.link, undefined)
})

t.test('the real contract deprecates no operation today, so no answer carries Deprecation', async (t) => {
  t.same([...deprecatedOperations(loadContracts().openApiDocument).keys()], [])
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders/1/items', headers: bearer(2) })
  t.equal(response.headers.deprecation, undefined)
})

t.test('every call of a deprecated operation is counted; each caller is logged once', async (t) => {
  const log = captureLog()
  const app = await build(t, {
    contracts: contractsWith('listOrderItems', DEPRECATED_ITEMS),
    env: { LOG_LEVEL: 'warn' },
    loggerStream: log.stream,
  })
  for (let i = 0; i < 3; i++) await app.inject({ method: 'GET', url: '/api/v1/orders/1/items', headers: bearer(2) })
  await app.inject({ method: 'GET', url: '/api/v1/orders/4/items', headers: bearer(3) })
  await app.inject({ method: 'GET', url: '/api/v1/orders/1', headers: bearer(2) })

  t.equal(await deprecatedUses(app, 'http_deprecated_usage_total', { operation: 'listOrderItems' }), 4)
  const lines = warnings(log.lines)
  t.equal(lines.length, 2, 'one line per caller within the hour')
  t.same(
    lines.map((line) => line.caller),
    ['sub:2', 'sub:3'],
  )
  t.match(lines[0], { deprecated: { operation: 'listOrderItems', sunset: 'Wed, 30 Jun 2027 00:00:00 GMT' } })
})

t.test('a GraphQL operation selecting a @deprecated field is counted per field and logged once per caller', async (t) => {
  const log = captureLog()
  const app = await build(t, { env: { LOG_LEVEL: 'warn' }, loggerStream: log.stream })
  const query = (body: string, sub = 2) => gql(app, { query: body }, { ...bearer(sub), 'content-type': 'application/json' })

  const old = '{ orders(first: 2) { id cursor items { sku } } }'
  for (let i = 0; i < 2; i++) {
    const response = await query(old)
    t.equal(response.statusCode, 200)
    t.equal(response.json().errors, undefined)
  }
  // Through a fragment too, and not for a document without deprecated fields.
  await query('query Page { orders(first: 1) { ...Row } } fragment Row on Order { id cursor }', 3)
  await query('{ ordersConnection(first: 2) { edges { cursor node { id } } } }')

  t.equal(await deprecatedUses(app, 'graphql_deprecated_usage_total', { field: 'Order.cursor' }), 3)
  const lines = warnings(log.lines)
  t.same(
    lines.map((line) => [line.caller, (line.deprecated as { field: string }).field]),
    [
      ['sub:2', 'Order.cursor'],
      ['sub:3', 'Order.cursor'],
    ],
  )
})

t.test('the log line comes again once the hour has passed, per caller and target; the oldest pairs are forgotten first', async (t) => {
  const HOUR = 60 * 60 * 1000
  const start = 1_000_000
  let now = start
  const mayLog = oncePerPeriod(HOUR, 3, () => now)
  const [grace, alan, graceField, katherine] = [
    'sub:2\0listOrderItems',
    'sub:3\0listOrderItems',
    'sub:2\0Order.cursor',
    'sub:4\0listOrderItems',
  ]
  t.equal(mayLog(grace), true, 'first use: logged')
  t.equal(mayLog(alan), true, 'another caller: logged')
  t.equal(mayLog(graceField), true, 'another target: logged')
  now = start + HOUR - 1
  t.equal(mayLog(grace), false, 'within the hour: not again')
  t.equal(mayLog(katherine), true, 'a fourth pair: logged, and the oldest (the first) is forgotten')
  t.equal(mayLog(grace), true, 'the forgotten pair is logged again before its hour is up')
  t.equal(mayLog(katherine), false, 'a remembered pair is not')
  now = start + HOUR
  t.equal(mayLog(graceField), true, 'an hour after it was logged: logged again')
  t.equal(mayLog(graceField), false, 'and not again within the next hour')
})

t.test('a deprecated operation the contract describes badly is refused when the app is built', async (t) => {
  const document = (id: string, patch: OperationPatch) => contractsWith(id, patch).openApiDocument
  t.throws(() => deprecatedOperations(document('listOrderItems', { deprecated: true })), /needs x-deprecated-at/)
  t.throws(
    () => deprecatedOperations(document('listOrderItems', { ...DEPRECATED_ITEMS, 'x-sunset': '2026-01-01' })),
    /x-sunset before x-deprecated-at/,
  )
  t.throws(() => deprecatedOperations(document('listOrderItems', { ...DEPRECATED_ITEMS, 'x-deprecated-by': 'nope' })), /operationId/)
  // listOrders has no {id} to fill getOrder's path with.
  t.throws(() => deprecatedOperations(document('listOrders', { ...DEPRECATED_ITEMS, 'x-deprecated-by': 'getOrder' })), /path parameters/)
  t.throws(() => deprecatedOperations(document('listOrders', { deprecated: true, 'x-deprecated-at': 'soon' })), /must be a date/)
})
