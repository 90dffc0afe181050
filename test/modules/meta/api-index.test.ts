/**
 * GET /api/v1, the REST API's front door (decisions §13, "Front doors"): with no credential it
 * links the contract, the docs, every collection of the contract, the event stream and GraphQL,
 * and each link answers.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { bearer, build } from '../../helper.ts'

t.test('GET /api/v1 answers an index of the API whose links all work', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/api/v1', headers: { host: 'api.test' } })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/json/)
  t.match(response.headers.link, /<http:\/\/api\.test\/api\/v1\/openapi\.json>; rel="service-desc"/)
  const index = response.json()
  t.equal(index.title, 'Orders, users and articles API')
  t.match(index.links, {
    self: 'http://api.test/api/v1',
    openapi: 'http://api.test/api/v1/openapi.json',
    docs: 'http://api.test/docs',
    graphql: 'http://api.test/graphql',
    event_stream: 'http://api.test/api/v1/events/stream',
  })
  const contract = parse(await readFile(new URL('../../../openapi.yaml', import.meta.url), 'utf8')) as {
    paths: Record<string, { get?: { operationId: string } }>
  }
  const lists = Object.entries(contract.paths)
    .filter(([path, item]) => !path.includes('{') && item.get?.operationId.startsWith('list'))
    .map(([path]) => path.slice(1))
  t.same(Object.keys(index.collections).sort(), lists.sort(), 'every collection of the contract')
  t.match(index.collections.orders, { href: 'http://api.test/api/v1/orders', operationId: 'listOrders', scopes: ['orders:read'] })
  // Each collection names the query parameters its read takes, `fields` (sparse fieldsets) among them.
  t.same(index.collections.orders.query, ['status', 'user_id', 'sort', 'limit', 'cursor', 'fields'])
  t.same(
    Object.keys(index.collections)
      .filter((name) => index.collections[name].query.includes('fields'))
      .sort(),
    ['articles', 'orders', 'products', 'users'],
    'the four top-level reads take fields',
  )

  for (const href of [
    index.links.openapi,
    index.links.openapi_yaml,
    index.links.docs,
    ...Object.values(index.collections).map((c) => (c as { href: string }).href),
  ]) {
    const url = new URL(href)
    const linked = await app.inject({ method: 'GET', url: url.pathname, headers: bearer(1, 'admin') })
    t.ok([200, 302].includes(linked.statusCode), `${url.pathname} answers (${linked.statusCode})`)
  }
})
