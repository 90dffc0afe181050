/**
 * openapi.yaml lists every status the service sends, by status (decisions §12: every response
 * validates against the contract). `default` stands only for the 5xx nobody can foresee, so the
 * test helper fails any test that receives an unlisted 4xx; here each status that used to reach
 * clients unlisted is sent, and those no injected request can cause (Node's own 408 and 431) are
 * read from the document.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { contractViolations } from '../contract-validator.ts'
import { bearer, build } from '../helper.ts'

const document = parse(await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>
}
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method, ...operation })),
)
const admin = bearer(1, 'admin')

t.test("every operation lists the statuses Node answers before a request is read (408, 431), and the router's 414", async (t) => {
  for (const operation of operations) {
    const statuses = Object.keys(operation.responses)
    t.ok(statuses.includes('408'), `${operation.operationId}: 408`)
    t.ok(statuses.includes('431'), `${operation.operationId}: 431`)
    if (operation.path.includes('{')) t.ok(statuses.includes('414'), `${operation.operationId}: 414 (a parameter too long)`)
    if (operation.method === 'get' || operation.method === 'delete')
      t.ok(statuses.includes('415'), `${operation.operationId}: 415 (a body)`)
  }
})

t.test('the 414 of a too-long id is documented for every operation with a path parameter', async (t) => {
  // Every /api/v1 answer received through inject is checked against openapi.yaml by the helper.
  const app = await build(t, { env: { RATE_LIMIT_MAX: '1000' } })
  for (const operation of operations.filter(({ path }) => path.includes('{'))) {
    const url = `/api/v1${operation.path.replace(/\{\w+\}/g, '1'.repeat(2000))}`
    const response = await app.inject({ method: operation.method.toUpperCase() as 'GET', url, headers: admin })
    t.equal(response.statusCode, 414, operation.operationId)
    t.equal(response.json().code, 'URI_TOO_LONG')
  }
})

t.test('the contract documents answer 304, 400, 406 and 415, and say so', async (t) => {
  const app = await build(t)
  for (const url of ['/api/v1/openapi.json', '/api/v1/openapi.yaml']) {
    const first = await app.inject({ method: 'GET', url })
    t.equal((await app.inject({ method: 'GET', url, headers: { 'if-none-match': first.headers.etag as string } })).statusCode, 304, url)
    t.equal((await app.inject({ method: 'GET', url: `${url}?q=%00` })).statusCode, 400, `${url}: unstorable text`)
    t.equal((await app.inject({ method: 'GET', url, headers: { accept: 'application/vnd.api+json; version=2' } })).statusCode, 406, url)
    const withBody = await app.inject({ method: 'GET', url, headers: { 'content-type': 'application/json' }, payload: '{}' })
    t.equal(withBody.statusCode, 415, `${url}: a body`)
  }
})

t.test('a GET or DELETE with a body is a documented 415', async (t) => {
  const app = await build(t)
  for (const [method, url] of [
    ['GET', '/api/v1/orders'],
    ['GET', '/api/v1/orders/3'],
    ['DELETE', '/api/v1/articles/1'],
  ] as const) {
    const response = await app.inject({ method, url, headers: { ...admin, 'content-type': 'application/json' }, payload: '{"a":1}' })
    t.equal(response.statusCode, 415, `${method} ${url}`)
  }
})

t.test('the check is not vacuous: an unlisted 4xx is a violation, `default` covers only a 5xx', async (t) => {
  const problem = JSON.stringify({ type: '/problems/x', title: 'X', status: 418, code: 'BAD_REQUEST' })
  const headers = { 'content-type': 'application/problem+json' }
  t.match(contractViolations({ method: 'GET', url: '/api/v1/orders', statusCode: 418, headers, body: problem }), [
    /listOrders: status 418 is not documented/,
  ])
  t.same(contractViolations({ method: 'GET', url: '/api/v1/orders', statusCode: 503, headers, body: problem.replace('418', '503') }), [])
})
