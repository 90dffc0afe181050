/**
 * Global object identification (decisions §13): every Node's `id` is a global id unique
 * across types, `node`/`nodes` find records by it under each type's own rules (ownership, scope),
 * read in one statement per type and priced by the cost model, and root lookups take a plain id
 * (the spec's `user(id: "2")`) or a global id of their own type.
 */
import t, { type Test } from 'tap'
import { bearer, build, gql } from '../helper.ts'
import { fromGlobalId, toGlobalId } from '../../src/graphql/resolving/global-id.ts'

type Body = {
  data?: Record<string, unknown> | null
  errors?: Array<{ message: string; path?: Array<string | number>; extensions: { code: string; reason?: string } }>
  extensions?: { cost?: { requestedQueryCost: number } }
}

const admin = bearer(1, 'admin')
const grace = bearer(2, 'orders:read orders:write')
const alan = bearer(3, 'orders:read')
const graceWithoutOrders = bearer(2, 'articles:write')

async function setup(t: Test, env: Record<string, string> = {}) {
  const statements: string[] = []
  const app = await build(t, { onQuery: (event) => void statements.push(event.query.sql), env: { EVENTS_RELAY: 'false', ...env } })
  const run = async (headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) => {
    statements.length = 0
    const response = await gql(app, { query, variables }, headers)
    return { status: response.statusCode, body: response.json() as Body, statements: [...statements] }
  }
  return { app, run }
}

t.test('a global id names one record of one type: User 2 and Order 2 differ, and only the canonical text is read', async (t) => {
  t.not(toGlobalId('User', 2), toGlobalId('Order', 2))
  t.match(toGlobalId('Order', 2), /^[A-Za-z0-9_-]+$/, 'base64url, no padding')
  t.same(fromGlobalId(toGlobalId('Order', 2)), { type: 'Order', key: 2 })
  t.same(fromGlobalId(toGlobalId('Product', 'KB-101')), { type: 'Product', key: 'KB-101' })
  for (const text of ['2', '', 'Order:2', Buffer.from('Order:02').toString('base64url'), Buffer.from('Item:2').toString('base64url')]) {
    t.equal(fromGlobalId(text), undefined, `refused: ${JSON.stringify(text)}`)
  }
  // Base64 with padding, or a last character whose spare bits are set, decodes to the same text.
  t.equal(fromGlobalId(`${toGlobalId('Order', 2)}=`), undefined, 'padding')
  // 'Order:2' is 7 bytes: 10 characters, the last with 4 spare bits; setting one reads the same bytes.
  const id = toGlobalId('Order', 2)
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const sloppy = `${id.slice(0, -1)}${alphabet[alphabet.indexOf(id.at(-1)!) + 1]}`
  t.equal(Buffer.from(sloppy, 'base64url').toString(), 'Order:2', 'the same bytes')
  t.equal(fromGlobalId(sloppy), undefined, 'non-canonical last character')
})

t.test('user(id:) takes the plain id of the spec, or the global id; a global id of another type is BAD_USER_INPUT', async (t) => {
  const { run } = await setup(t)
  const plain = await run(grace, '{ user(id: "2") { id databaseId name } }')
  t.notOk(plain.body.errors)
  t.same(plain.body.data, { user: { id: toGlobalId('User', 2), databaseId: 2, name: 'Grace Hopper' } })
  const global = await run(grace, 'query ($id: ID!) { user(id: $id) { id databaseId name } }', { id: toGlobalId('User', 2) })
  t.same(global.body.data, plain.body.data, 'the same record either way')
  const wrongType = await run(grace, 'query ($id: ID!) { user(id: $id) { id } }', { id: toGlobalId('Order', 2) })
  t.same(wrongType.body.data, { user: null })
  t.equal(wrongType.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT')
  t.equal(wrongType.body.errors?.[0]?.extensions.reason, 'INVALID_ID')
  const order = await run(grace, 'query ($id: ID!) { order(id: $id) { id databaseId user { id } } }', { id: toGlobalId('Order', 2) })
  t.same(order.body.data, { order: { id: toGlobalId('Order', 2), databaseId: 2, user: { id: toGlobalId('User', 2) } } })
})

t.test('node answers what the type’s own lookup answers, for the owner, another user and a caller without the scope', async (t) => {
  const { run } = await setup(t)
  const cases: Array<[string, Record<string, string>, string, string]> = [
    ['the owner reads her order', grace, 'order', toGlobalId('Order', 2)],
    ['another user’s order', alan, 'order', toGlobalId('Order', 2)],
    ['an order without orders:read', graceWithoutOrders, 'order', toGlobalId('Order', 2)],
    ['a missing order', grace, 'order', toGlobalId('Order', 999)],
    ['the caller’s own user record', grace, 'user', toGlobalId('User', 2)],
    ['another user’s record', alan, 'user', toGlobalId('User', 2)],
    ['an admin reads any user', admin, 'user', toGlobalId('User', 2)],
    ['an article', alan, 'article', toGlobalId('Article', 1)],
  ]
  for (const [name, caller, field, id] of cases) {
    const own = await run(caller, `query ($id: ID!) { ${field}(id: $id) { id databaseId } }`, { id })
    const node = await run(
      caller,
      'query ($id: ID!) { node(id: $id) { id ... on Order { databaseId } ... on User { databaseId } ... on Article { databaseId } } }',
      { id },
    )
    t.same(node.body.data?.node, own.body.data?.[field], `${name}: the same data`)
    t.same(
      node.body.errors?.map((e) => e.extensions.code),
      own.body.errors?.map((e) => e.extensions.code),
      `${name}: the same error (${own.body.errors?.[0]?.extensions.code ?? 'none'})`,
    )
  }
  const forbidden = await run(alan, 'query ($id: ID!) { node(id: $id) { id } }', { id: toGlobalId('Order', 2) })
  t.same(forbidden.body.data, { node: null }, 'another user’s order is null')
  t.equal(forbidden.body.errors?.[0]?.extensions.code, 'FORBIDDEN')
  const plain = await run(grace, '{ node(id: "2") { id } }')
  t.equal(plain.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', 'node takes global ids only')
})

t.test('nodes: every type in order, null and errors at their index, one statement per type', async (t) => {
  const { run } = await setup(t)
  const ids = [
    toGlobalId('User', 2),
    toGlobalId('Order', 2),
    toGlobalId('Order', 4), // Alan's
    toGlobalId('Order', 999),
    toGlobalId('Product', 'KB-101'),
    toGlobalId('Company', 1),
    toGlobalId('Author', 3),
    toGlobalId('Article', 1),
    toGlobalId('Comment', 1),
    'not-a-global-id',
    toGlobalId('Order', 1),
    toGlobalId('User', 3), // Alan's record
  ]
  const query = `query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id
      ... on User { databaseId name } ... on Order { databaseId status } ... on Product { sku }
      ... on Company { databaseId name } ... on Author { databaseId name } ... on Article { databaseId }
      ... on Comment { databaseId } } }`
  const { body, statements } = await run(grace, query, { ids })
  const nodes = body.data?.nodes as Array<Record<string, unknown> | null>
  // The second run of a document executes compiled by graphql-jit (GRAPHQL_JIT=1): the same answer.
  const compiled = await run(grace, query, { ids })
  t.strictSame(compiled.body.data, body.data, 'the same data compiled by graphql-jit')
  t.same(compiled.body.errors, body.errors, 'and the same errors')
  t.equal(nodes.length, ids.length)
  t.match(nodes[0], { __typename: 'User', id: ids[0], databaseId: 2, name: 'Grace Hopper' })
  t.match(nodes[1], { __typename: 'Order', id: ids[1], databaseId: 2 })
  t.equal(nodes[2], null, 'another user’s order')
  t.equal(nodes[3], null, 'a missing order')
  t.match(nodes[4], { __typename: 'Product', id: ids[4], sku: 'KB-101' })
  t.match(nodes[5], { __typename: 'Company', id: ids[5], databaseId: 1 })
  t.match(nodes[6], { __typename: 'Author', id: ids[6], databaseId: 3, name: 'Alan Turing' })
  t.match(nodes[7], { __typename: 'Article', id: ids[7], databaseId: 1 })
  t.match(nodes[8], { __typename: 'Comment', id: ids[8], databaseId: 1 })
  t.equal(nodes[9], null, 'not a global id')
  t.match(nodes[10], { __typename: 'Order', databaseId: 1 })
  t.equal(nodes[11], null, 'another user’s record')
  t.same(
    body.errors?.map((error) => [error.path, error.extensions.code]).sort((a, b) => Number(a[0]![1]) - Number(b[0]![1])),
    [
      [['nodes', 2], 'FORBIDDEN'],
      [['nodes', 9], 'BAD_USER_INPUT'],
      [['nodes', 11], 'FORBIDDEN'],
    ],
  )
  // Users, orders (with items), products, companies, authors, articles, comments: one statement each.
  t.equal(statements.length, 7, `one statement per type: ${statements.join(' | ')}`)
  const orderStatements = statements.filter((statement) => /from "?orders"? /.test(statement))
  t.equal(orderStatements.length, 1, 'the three orders in one statement, their items with them')
})

t.test("an order's line item is a Node: its id is its order's and its position, and node reads it through its order", async (t) => {
  const { run } = await setup(t)
  const item = (orderId: number, position: number) => toGlobalId('Item', { orderId, position })
  t.same(fromGlobalId(item(3, 1)), { type: 'Item', key: { orderId: 3, position: 1 } })
  for (const text of ['Item:3', 'Item:3:01', 'Item:03:1', 'Item:3:100', 'Item:0:1', 'Item:3:-1'])
    t.equal(fromGlobalId(Buffer.from(text).toString('base64url')), undefined, `refused: ${text}`)

  const order = await run(grace, '{ order(id: "3") { items { id sku qty } } }')
  t.same(order.body.data, {
    order: {
      items: [
        { id: item(3, 0), sku: 'KB-101', qty: 1 },
        { id: item(3, 1), sku: 'CB-404', qty: 2 },
      ],
    },
  })
  const query = `query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Item { sku qty product { name } } } }`
  const { body, statements } = await run(grace, query, { ids: [item(3, 1), item(3, 2), item(4, 0), item(1, 0)] })
  t.same(body.data?.nodes, [
    { __typename: 'Item', id: item(3, 1), sku: 'CB-404', qty: 2, product: { name: 'USB-C cable' } },
    null,
    null,
    { __typename: 'Item', id: item(1, 0), sku: 'MN-303', qty: 1, product: { name: '27-inch monitor' } },
  ])
  t.same(
    body.errors?.map((error) => [error.path, error.extensions.code]),
    [[['nodes', 2], 'FORBIDDEN']],
    "past the order's last item: null; an item of another user's order: its order's FORBIDDEN",
  )
  t.equal(statements.filter((statement) => /from "?orders"? /.test(statement)).length, 1, 'the items of two orders: one statement')
  const noScope = await run(graceWithoutOrders, 'query ($id: ID!) { node(id: $id) { id } }', { id: item(3, 0) })
  t.equal(noScope.body.errors?.[0]?.extensions.code, 'FORBIDDEN', 'an item needs orders:read, as its order does')

  // Replacing the items gives the line at a position new values under the same id.
  await run(grace, 'mutation { updateOrder(id: "3", input: { items: [{ sku: "MS-202", qty: 5 }] }) { id } }')
  const replaced = await run(grace, query, { ids: [item(3, 0), item(3, 1)] })
  t.same(replaced.body.data?.nodes, [
    { __typename: 'Item', id: item(3, 0), sku: 'MS-202', qty: 5, product: { name: 'Wireless mouse' } },
    null,
  ])
})

t.test('nodes takes at most 100 ids and costs one record per id; past the cost limit it is refused', async (t) => {
  const { run } = await setup(t)
  const ids = (count: number) => Array.from({ length: count }, (_, index) => toGlobalId('Article', index + 1))
  const hundred = await run(alan, 'query ($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: ids(100) })
  t.notOk(hundred.body.errors)
  t.equal((hundred.body.data!.nodes as unknown[]).length, 100)
  t.equal(hundred.body.extensions?.cost?.requestedQueryCost, 100 * (1 + 1), '100 × (1 + ⌈0.1⌉)')
  const tooMany = await run(alan, 'query ($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: ids(101) })
  t.equal(tooMany.body.data, null)
  t.equal(tooMany.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT')
  t.equal(tooMany.body.errors?.[0]?.extensions.reason, 'TOO_MANY_IDS')
  t.equal(tooMany.statements.length, 0, 'refused before any statement')
  // 30 × (1 + 100 × (1 + (1 + ⌈0.1⌉))) = 9,030 points: over the 5,000 of one operation.
  const costly = await run(
    alan,
    'query ($ids: [ID!]!) { nodes(ids: $ids) { ... on Article { comments(first: 100) { author { id } } } } }',
    {
      ids: ids(30),
    },
  )
  t.equal(costly.body.errors?.[0]?.extensions.code, 'COST_LIMIT_EXCEEDED')
  t.equal(costly.statements.length, 0, 'nothing ran')
  const single = await run(alan, 'query ($id: ID!) { node(id: $id) { id } }', { id: toGlobalId('Article', 1) })
  t.equal(single.body.extensions?.cost?.requestedQueryCost, 2, 'node costs like order(id:)')
})

t.test('mutations take and return global ids; a plain id still works', async (t) => {
  const { run } = await setup(t)
  const created = await run(grace, 'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }) { id databaseId } }')
  const order = created.body.data?.createOrder as { id: string; databaseId: number }
  t.equal(order.id, toGlobalId('Order', order.databaseId))
  const cancelled = await run(grace, 'mutation ($id: ID!) { cancelOrder(id: $id) { id status } }', { id: order.id })
  t.same(cancelled.body.data, { cancelOrder: { id: order.id, status: 'cancelled' } })
  const deleted = await run(grace, 'mutation ($id: ID!) { deleteOrder(id: $id) }', { id: String(order.databaseId) })
  t.same(deleted.body.data, { deleteOrder: order.id }, 'the deleted order’s global id')
  const wrong = await run(grace, 'mutation ($id: ID!) { payOrder(id: $id) { id } }', { id: toGlobalId('Article', 1) })
  t.equal(wrong.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT')
})
