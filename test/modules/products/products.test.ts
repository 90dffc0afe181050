/**
 * The product catalog through the app, on both styles: any valid token reads it, in sku order;
 * only admins add to it, and a sku is taken once.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, build, gql } from '../../helper.ts'
import { toGlobalId } from '../../../src/graphql/resolving/global-id.ts'

const ada = bearer(1, 'admin')
const reader = bearer(4, '')

async function graphql(app: FastifyInstance, headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) {
  const response = await gql(app, { query, variables }, headers)
  return response.json()
}

const SKUS_IN_ORDER = ['CB-404', 'HD-505', 'KB-101', 'MN-303', 'MS-202', 'WC-606']

t.test('products: any token reads the catalog by sku, in pages that both styles share', async (t) => {
  const app = await build(t)
  const first = await app.inject({ method: 'GET', url: '/api/v1/products?limit=4', headers: reader })
  t.equal(first.statusCode, 200)
  t.same(
    first.json().data.map((product: { sku: string }) => product.sku),
    SKUS_IN_ORDER.slice(0, 4),
  )
  t.same(first.json().data[0], { sku: 'CB-404', name: 'USB-C cable', price: 1200 })
  t.equal(first.json().page.total, 6)

  const second = await graphql(
    app,
    reader,
    'query ($after: String) { productsConnection(first: 4, after: $after) { edges { node { id sku } } pageInfo { hasNextPage } } }',
    {
      after: new URL(first.json().page.next).searchParams.get('cursor'),
    },
  )
  t.same(
    second.data.productsConnection.edges.map((edge: { node: { id: string; sku: string } }) => [edge.node.id, edge.node.sku]),
    SKUS_IN_ORDER.slice(4).map((sku) => [toGlobalId('Product', sku), sku]),
    "REST's cursor resumes GraphQL's list; a product's id is its sku",
  )
  t.equal(second.data.productsConnection.pageInfo.hasNextPage, false)

  const one = await graphql(app, reader, '{ product(sku: "KB-101") { name price } missing: product(sku: "NOPE-1") { name } }')
  t.same(one.data, { product: { name: 'Mechanical keyboard', price: 8900 }, missing: null })
  t.notOk(one.errors, 'an unknown sku is null, not an error')

  const tooMany = await app.inject({ method: 'GET', url: '/api/v1/products?limit=101', headers: reader })
  t.equal(tooMany.statusCode, 400)
  t.equal((await graphql(app, reader, '{ products(first: 101) { sku } }')).errors[0].extensions.code, 'BAD_USER_INPUT')
})

t.test('products: only an admin adds one; a taken sku is 409 and leaves the catalog as it was', async (t) => {
  const app = await build(t)
  const product = { sku: 'DK-707', name: 'Standing desk', price: 45900 }
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/products', headers: reader, payload: product })).statusCode, 403)
  t.equal(
    (await graphql(app, reader, 'mutation { createProduct(input: { sku: "DK-708", name: "Desk", price: 1 }) { sku } }')).errors[0]
      .extensions.code,
    'FORBIDDEN',
  )

  const created = await app.inject({ method: 'POST', url: '/api/v1/products', headers: ada, payload: product })
  t.equal(created.statusCode, 201)
  t.same(created.json(), product)
  t.notOk(created.headers.location, 'the catalog has no per-product URL, so no Location')

  const taken = await app.inject({ method: 'POST', url: '/api/v1/products', headers: ada, payload: { ...product, name: 'Other desk' } })
  t.equal(taken.statusCode, 409)
  t.equal(taken.json().code, 'PRODUCT_EXISTS')

  const viaGraphql = await graphql(
    app,
    ada,
    'mutation { createProduct(input: { sku: "LM-808", name: "Desk lamp", price: 3900 }) { id name price } }',
  )
  t.same(viaGraphql.data.createProduct, { id: toGlobalId('Product', 'LM-808'), name: 'Desk lamp', price: 3900 })
  const takenViaGraphql = await graphql(app, ada, 'mutation { createProduct(input: { sku: "LM-808", name: "Lamp", price: 1 }) { sku } }')
  t.equal(takenViaGraphql.errors[0].extensions.code, 'CONFLICT')

  const catalog = await graphql(app, reader, '{ product(sku: "DK-707") { name } products(first: 100) { sku } }')
  t.same(catalog.data.product, { name: 'Standing desk' }, 'the first write stands')
  t.equal(catalog.data.products.length, 8)
})
