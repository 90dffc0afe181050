import t from 'tap'
import { bearer, build, gql } from '../helper.ts'

const grace = bearer(2, 'articles:write')
const alan = bearer(3, 'articles:write')

t.test('public reads are cached per caller and invalidated by writes from either style', async (t) => {
  let statements = 0
  // The outbox relay's polling would be counted too.
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  const query = '{ articles(first: 5) { id title } }'
  const read = async (headers: Record<string, string>) => (await gql(app, query, headers)).json()

  const first = await read(grace)
  statements = 0
  const again = await read(grace)
  t.same(again.data, first.data)
  t.equal(statements, 0, 'the second read is served from the cache')

  statements = 0
  await read(alan)
  t.ok(statements > 0, "another caller's read is not served from grace's cache entry")

  // A REST write invalidates what GraphQL cached.
  const created = await app.inject({ method: 'POST', url: '/api/v1/articles', headers: grace, payload: { title: 'Fresh', body: 'News' } })
  t.equal(created.statusCode, 201)
  const afterRest = await read(grace)
  t.equal(afterRest.data.articles[0].title, 'Fresh', 'the new article is visible at once')

  // A GraphQL write does too.
  await gql(app, { query: `mutation { updateArticle(id: ${created.json().id}, input: { title: "Renamed" }) { id } }` }, grace)
  const afterGraphql = await read(grace)
  t.equal(afterGraphql.data.articles[0].title, 'Renamed')

  const single = `{ article(id: ${created.json().id}) { title } }`
  t.equal((await gql(app, { query: single }, grace)).json().data.article.title, 'Renamed')
  await app.inject({ method: 'DELETE', url: `/api/v1/articles/${created.json().id}`, headers: grace })
  t.same((await gql(app, { query: single }, grace)).json().data, { article: null }, 'a deleted article is gone from the cache')
})

t.test('a new product is visible to cached catalog reads at once', async (t) => {
  const app = await build(t)
  const admin = bearer(1, 'admin')
  const list = async () => (await gql(app, '{ products(first: 50) { sku } }', admin)).json().data.products.length
  const before = await list()
  await app.inject({ method: 'POST', url: '/api/v1/products', headers: admin, payload: { sku: 'ZZ-999', name: 'New', price: 1 } })
  t.equal(await list(), before + 1)
})
