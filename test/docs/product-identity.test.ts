/**
 * What docs/contracts.md says about a product's identity is what the GraphQL API answers: the sku
 * is the key (`product(sku:)`), and `Product.id` is an opaque global id, not the sku.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { bearer, build } from '../helper.ts'

t.test('docs/contracts.md describes Product.id as the API answers it (a global id, not the sku)', async (t) => {
  const app = await build(t)
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: bearer(2, 'orders:read'),
    payload: { query: '{ product(sku: "KB-101") { id sku } }' },
  })
  const product = response.json().data.product
  t.equal(product.sku, 'KB-101')
  t.not(product.id, product.sku, 'Product.id is not the sku')
  const contracts = await readFile(new URL('../../docs/contracts.md', import.meta.url), 'utf8')
  t.notMatch(contracts, /`Product\.id` is the sku/, 'and the docs do not say it is')
  t.match(contracts, /`Product\.id` is an opaque global id/)
})
