/**
 * Every root query and mutation field of schema.graphql is exercised here, with its result
 * checked; the list is compared with the schema's root fields, so a new field without a test fails.
 * (Subscriptions are exercised over WebSocket by the subscriptions tests.)
 */
import t from 'tap'
import { rootFields } from '../../src/generated/graphql/types.ts'
import { bearer, build } from '../helper.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

type App = Awaited<ReturnType<typeof build>>
const admin = bearer(1, 'admin')
const grace = bearer(2, 'orders:read orders:write articles:write')

async function gql(app: App, query: string, headers = grace) {
  const body = (await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query } })).json()
  if (body.errors) throw new Error(`${query}: ${JSON.stringify(body.errors)}`)
  return body.data
}

const exercised = new Set<string>()

t.test('every query field', async (t) => {
  const app = await build(t)
  const check = async (field: string, query: string, assert: (data: any) => void, headers = grace) => {
    assert(await gql(app, query, headers))
    exercised.add(`Query.${field}`)
  }
  await check('user', '{ user(id: 2) { id name createdAt company { name } cursor } }', (d) =>
    t.equal(d.user.company.name, 'Acme Corporation'),
  )
  await check('me', '{ me { id databaseId name } }', (d) =>
    t.same(d.me, { id: toGlobalId('User', 2), databaseId: 2, name: 'Grace Hopper' }),
  )
  await check('users', '{ users(first: 2) { id cursor } }', (d) => t.equal(d.users.length, 2), admin)
  await check(
    'order',
    '{ order(id: 3) { id status total items { sku qty unitPrice product { name price } } user { name } createdAt updatedAt cursor } }',
    (d) => t.equal(d.order.items[0].product.name, 'Mechanical keyboard'),
  )
  await check('orders', '{ orders(status: pending, first: 5) { id status cursor } }', (d) =>
    t.ok(d.orders.every((o: { status: string }) => o.status === 'pending')),
  )
  await check(
    'article',
    '{ article(id: 1) { title body author { name } comments(first: 1) { body author { name } article { id } cursor } } }',
    (d) => t.equal(d.article.comments.length, 1),
  )
  await check('articles', '{ articles(first: 2) { id cursor } }', (d) => t.equal(d.articles.length, 2))
  await check('product', '{ product(sku: "KB-101") { sku name price cursor } }', (d) => t.equal(d.product.price, 8900))
  await check('products', '{ products(first: 3) { sku } }', (d) => t.equal(d.products.length, 3))
  // Global object identification (decisions §13).
  await check('node', `{ node(id: "${toGlobalId('Order', 3)}") { id ... on Order { databaseId status } } }`, (d) =>
    t.same(d.node, { id: toGlobalId('Order', 3), databaseId: 3, status: 'pending' }),
  )
  await check('nodes', `{ nodes(ids: ["${toGlobalId('Product', 'KB-101')}", "${toGlobalId('User', 2)}"]) { __typename id } }`, (d) =>
    t.same(d.nodes, [
      { __typename: 'Product', id: toGlobalId('Product', 'KB-101') },
      { __typename: 'User', id: toGlobalId('User', 2) },
    ]),
  )
  // The connections beside the lists.
  await check(
    'usersConnection',
    '{ usersConnection(first: 2) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }',
    (d) => t.equal(d.usersConnection.edges.length, 2),
    admin,
  )
  await check(
    'ordersConnection',
    '{ ordersConnection(status: pending, first: 5) { edges { cursor node { id status } } pageInfo { hasNextPage } } }',
    (d) => t.ok(d.ordersConnection.edges.every((e: { node: { status: string } }) => e.node.status === 'pending')),
  )
  await check(
    'articlesConnection',
    '{ articlesConnection(first: 2) { edges { node { id commentsConnection(first: 1) { edges { node { body } } } } } } }',
    (d) => t.equal(d.articlesConnection.edges.length, 2),
  )
  await check('productsConnection', '{ productsConnection(first: 3) { edges { node { id sku } } pageInfo { hasNextPage } } }', (d) =>
    t.equal(d.productsConnection.edges.length, 3),
  )
  const page1 = await gql(app, '{ orders(first: 1) { id cursor } }', admin)
  const page2 = await gql(app, `{ orders(first: 1, after: ${JSON.stringify(page1.orders[0].cursor)}) { id } }`, admin)
  t.not(page2.orders[0].id, page1.orders[0].id, 'after continues from a cursor')
})

t.test('every mutation field', async (t) => {
  const app = await build(t)
  const check = async (field: string, query: string, assert: (data: any) => void, headers = grace) => {
    const data = await gql(app, query, headers)
    assert(data)
    exercised.add(`Mutation.${field}`)
    return data
  }
  const created = await check(
    'createOrder',
    'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }) { id status total } }',
    (d) => t.equal(d.createOrder.total, 8900),
  )
  const id = created.createOrder.id
  await check(
    'updateOrder',
    `mutation { updateOrder(id: ${JSON.stringify(id)}, input: { items: [{ sku: "MS-202", qty: 2 }] }) { total } }`,
    (d) => t.equal(d.updateOrder.total, 5800),
  )
  await check('payOrder', `mutation { payOrder(id: ${JSON.stringify(id)}, reason: "card") { status } }`, (d) =>
    t.equal(d.payOrder.status, 'paid'),
  )
  await check('refundOrder', `mutation { refundOrder(id: ${JSON.stringify(id)}) { status } }`, (d) =>
    t.equal(d.refundOrder.status, 'refunded'),
  )
  const other = (await gql(app, 'mutation { createOrder(input: { items: [{ sku: "CB-404", qty: 1 }] }) { id } }')).createOrder.id
  await check('cancelOrder', `mutation { cancelOrder(id: ${JSON.stringify(other)}) { status } }`, (d) =>
    t.equal(d.cancelOrder.status, 'cancelled'),
  )
  await check('deleteOrder', `mutation { deleteOrder(id: ${JSON.stringify(other)}) }`, (d) => t.equal(d.deleteOrder, other))
  const article = await check('createArticle', 'mutation { createArticle(input: { title: "T", body: "B" }) { id author { name } } }', (d) =>
    t.equal(d.createArticle.author.name, 'Grace Hopper'),
  )
  const articleId = article.createArticle.id
  await check('updateArticle', `mutation { updateArticle(id: ${JSON.stringify(articleId)}, input: { body: "B2" }) { title body } }`, (d) =>
    t.same(d.updateArticle, { title: 'T', body: 'B2' }),
  )
  await check(
    'addComment',
    `mutation { addComment(articleId: ${JSON.stringify(articleId)}, input: { body: "Hi" }) { body article { id } } }`,
    (d) => t.equal(d.addComment.article.id, articleId),
  )
  await check('deleteArticle', `mutation { deleteArticle(id: ${JSON.stringify(articleId)}) }`, (d) => t.equal(d.deleteArticle, articleId))
  await check(
    'createUser',
    'mutation { createUser(input: { name: "Edsger Dijkstra", companyId: 2 }) { name company { name } } }',
    (d) => t.equal(d.createUser.company.name, 'Globex'),
    admin,
  )
  await check(
    'createProduct',
    'mutation { createProduct(input: { sku: "GQ-1", name: "Thing", price: 5 }) { sku price } }',
    (d) => t.equal(d.createProduct.price, 5),
    admin,
  )
})

t.test('no root query or mutation field is left unexercised', async (t) => {
  const expected = [...rootFields.Query.map((f) => `Query.${f}`), ...rootFields.Mutation.map((f) => `Mutation.${f}`)]
  t.same(
    expected.filter((field) => !exercised.has(field)),
    [],
  )
})
