/**
 * One policy, two styles: every cell of caller × action is run through REST and through GraphQL,
 * on fresh records, and both styles must allow or deny it alike.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, build, createOrder, gql } from '../helper.ts'

type Headers = { authorization: string }

const callers: Record<string, Headers> = {
  owner: bearer(2, 'orders:read orders:write articles:write'),
  'other user': bearer(3, 'orders:read orders:write articles:write'),
  'owner, read-only': bearer(2, 'orders:read'),
  'owner, no scopes': bearer(2, ''),
  admin: bearer(1, 'admin'),
}

interface Fixture {
  orderId: number
  articleId: number
  unique: string
}

type Outcome = 'allow' | 'deny'

async function rest(app: FastifyInstance, headers: Headers, method: string, url: string, payload?: unknown): Promise<Outcome> {
  const response = await app.inject({ method: method as 'GET', url, headers, ...(payload ? { payload: payload as object } : {}) })
  if (response.statusCode < 300) return 'allow'
  if (response.statusCode === 403) return 'deny'
  throw new Error(`${method} ${url}: unexpected ${response.statusCode} ${response.body}`)
}

async function graphql(app: FastifyInstance, headers: Headers, query: string): Promise<Outcome> {
  const response = await gql(app, query, headers)
  const body = response.json()
  if (!body.errors) return 'allow'
  if (body.errors.every((error: { extensions: { code: string } }) => error.extensions.code === 'FORBIDDEN')) return 'deny'
  throw new Error(`${query}: unexpected ${response.body}`)
}

const actions: Record<
  string,
  {
    rest: (app: FastifyInstance, h: Headers, f: Fixture) => Promise<Outcome>
    graphql: (app: FastifyInstance, h: Headers, f: Fixture) => Promise<Outcome>
  }
> = {
  'read the order': {
    rest: (app, h, f) => rest(app, h, 'GET', `/api/v1/orders/${f.orderId}`),
    graphql: (app, h, f) => graphql(app, h, `{ order(id: ${f.orderId}) { id } }`),
  },
  'list orders': {
    rest: (app, h) => rest(app, h, 'GET', '/api/v1/orders'),
    graphql: (app, h) => graphql(app, h, '{ orders { id } }'),
  },
  'read the user': {
    rest: (app, h) => rest(app, h, 'GET', '/api/v1/users/2'),
    graphql: (app, h) => graphql(app, h, '{ user(id: 2) { id name } }'),
  },
  "list the user's orders": {
    rest: (app, h) => rest(app, h, 'GET', '/api/v1/users/2/orders'),
    graphql: (app, h) => graphql(app, h, '{ user(id: 2) { orders(last: 5) { id } } }'),
  },
  'create an order': {
    rest: (app, h) => rest(app, h, 'POST', '/api/v1/orders', { items: [{ sku: 'KB-101', qty: 1 }] }),
    graphql: (app, h) => graphql(app, h, 'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }) { id } }'),
  },
  'pay the order': {
    rest: (app, h, f) => rest(app, h, 'POST', `/api/v1/orders/${f.orderId}/payment`),
    graphql: (app, h, f) => graphql(app, h, `mutation { payOrder(id: ${f.orderId}) { id } }`),
  },
  'edit the article': {
    rest: (app, h, f) => rest(app, h, 'PATCH', `/api/v1/articles/${f.articleId}`, { title: 'Edited' }),
    graphql: (app, h, f) => graphql(app, h, `mutation { updateArticle(id: ${f.articleId}, input: { title: "Edited" }) { id } }`),
  },
  'list users': {
    rest: (app, h) => rest(app, h, 'GET', '/api/v1/users'),
    graphql: (app, h) => graphql(app, h, '{ users { id } }'),
  },
  'add a product': {
    rest: (app, h, f) => rest(app, h, 'POST', '/api/v1/products', { sku: `R-${f.unique}`, name: 'Thing', price: 100 }),
    graphql: (app, h, f) =>
      graphql(app, h, `mutation { createProduct(input: { sku: "G-${f.unique}", name: "Thing", price: 100 }) { sku } }`),
  },
}

t.test('REST and GraphQL allow and deny exactly the same cells', async (t) => {
  const app = await build(t)
  const owner = callers.owner!
  let counter = 0
  const fixture = async (): Promise<Fixture> => {
    const order = await createOrder(app, [{ sku: 'MS-202', qty: 1 }], owner)
    const article = await app.inject({ method: 'POST', url: '/api/v1/articles', headers: owner, payload: { title: 'Mine', body: 'Text' } })
    return { orderId: order.json().id, articleId: article.json().id, unique: `${process.pid}-${counter++}` }
  }
  const table: string[] = []
  for (const [callerName, headers] of Object.entries(callers)) {
    for (const [actionName, action] of Object.entries(actions)) {
      const viaRest = await action.rest(app, headers, await fixture())
      const viaGraphql = await action.graphql(app, headers, await fixture())
      t.equal(viaGraphql, viaRest, `${callerName} / ${actionName}: REST ${viaRest}, GraphQL ${viaGraphql}`)
      table.push(`${callerName} / ${actionName}: ${viaRest}`)
    }
  }
  // The matrix is not trivially uniform: spot-check the rules of decisions §2.
  t.ok(table.includes('admin / list users: allow'))
  t.ok(table.includes('other user / read the order: deny'))
  t.ok(table.includes('owner, read-only / pay the order: deny'))
  t.ok(table.includes('owner / pay the order: allow'))
  t.ok(table.includes('other user / edit the article: deny'))
  t.ok(table.includes('owner, no scopes / read the user: allow'))
  t.ok(table.includes('owner / list users: deny'))
})
