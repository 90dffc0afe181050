/**
 * The front doors (decisions §13, "Front doors"), with no credential: GET /api/v1 links the
 * contract, the docs, every collection of the contract with its query parameters, the event stream
 * and GraphQL; GET / sends a browser to the docs and answers any other client with the start
 * banner's links. Each link answers.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { startBanner } from '../../../src/start-banner.ts'
import { bearer, build, testConfig } from '../../helper.ts'

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

t.test("GET / sends a browser to the docs and answers any other client with the start banner's links", async (t) => {
  const app = await build(t)
  const browser = await app.inject({
    method: 'GET',
    url: '/',
    headers: { host: 'api.test', accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
  })
  t.equal(browser.statusCode, 302)
  t.equal(browser.headers.location, '/docs')
  t.match(browser.headers.vary, /Accept/)

  const banner = startBanner(testConfig(), 'http://api.test')
  for (const accept of [undefined, 'application/json', '*/*']) {
    const client = await app.inject({ method: 'GET', url: '/', headers: { host: 'api.test', ...(accept ? { accept } : {}) } })
    t.equal(client.statusCode, 200, `Accept: ${accept}`)
    t.match(client.headers['content-type'], /^application\/json/)
    t.match(client.headers.vary, /Accept/)
    t.match(client.headers.link, /<http:\/\/api\.test\/api\/v1\/openapi\.json>; rel="service-desc"/)
    const { links } = client.json() as { links: Record<string, string> }
    t.match(links, { rest_api: 'http://api.test/api/v1', docs: 'http://api.test/docs', graphql_subscriptions: 'ws://api.test/graphql' })
    for (const href of Object.values(links)) t.ok(banner.includes(href), `${href} is a link of the banner`)
  }

  // Each link a GET can follow answers (GraphQL and MCP take a POST; their own tests cover them).
  const { links } = (await app.inject({ method: 'GET', url: '/', headers: { host: 'api.test' } })).json() as {
    links: Record<string, string>
  }
  for (const name of ['rest_api', 'docs', 'graphiql', 'openapi', 'openapi_yaml', 'healthz', 'readyz']) {
    const linked = await app.inject({ method: 'GET', url: new URL(links[name]!).pathname })
    t.ok([200, 302].includes(linked.statusCode), `${name} answers (${linked.statusCode})`)
  }
})
