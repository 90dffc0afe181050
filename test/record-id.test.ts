/**
 * Record ids are canonical decimal integers (decisions §12), in REST paths and GraphQL `ID`
 * arguments alike: `0x10`, `3.0`, ` 3`, `+3`, `03`, `1e1` are refused, never read as another
 * record. The REST half walks every operation of openapi.yaml that has a path id; the GraphQL half
 * every `ID` argument and input field of schema.graphql's Query and Mutation.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { buildSchema, getNamedType, getNullableType, isInputObjectType, type GraphQLInputType } from 'graphql'
import { parseRecordId } from '../src/record-id.ts'
import { toGlobalId } from '../src/graphql/resolving/global-id.ts'
import { bearer, build, gql } from './helper.ts'

/** As they appear in a URL; Fastify decodes `%20` before routing. */
const NON_CANONICAL = ['0x10', '3.0', '%203', '+3', '03', '1e1', '0', '-3', '3%20', '%EF%BC%93', '2147483648', '99999999999']

t.test('parseRecordId accepts exactly ^[1-9][0-9]{0,9}$ up to 2147483647', async (t) => {
  for (const text of ['1', '3', '16', '2147483647', '1000000000']) t.equal(parseRecordId(text), Number(text), text)
  for (const text of [
    '0x10',
    '3.0',
    ' 3',
    '3 ',
    '+3',
    '03',
    '1e1',
    '0',
    '-3',
    '',
    '３',
    '2147483648',
    '9999999999',
    '12345678901',
    '1_0',
    'Infinity',
  ]) {
    t.equal(parseRecordId(text), undefined, JSON.stringify(text))
  }
})

interface Operation {
  operationId: string
  requestBody?: { content: Record<string, unknown> }
}
const document = parse(await readFile(new URL('../openapi.yaml', import.meta.url), 'utf8')) as {
  servers: Array<{ url: string }>
  paths: Record<string, Record<string, Operation>>
}
const prefix = new URL(document.servers[0]!.url).pathname.replace(/\/$/, '')
const withPathId = Object.entries(document.paths)
  .filter(([path]) => path.includes('{id}'))
  .flatMap(([path, item]) =>
    ['get', 'put', 'post', 'patch', 'delete']
      .filter((method) => item[method])
      .map((method) => ({ path, method: method.toUpperCase(), operation: item[method]! })),
  )

t.test('every REST operation with a path id answers 400 naming the parameter for a non-canonical id', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '1000000' } })
  t.ok(withPathId.length >= 16, `${withPathId.length} operations have a path id`)
  const admin = bearer(1, 'admin')
  for (const { path, method, operation } of withPathId) {
    // A body of the media type the operation takes, so that nothing but the id can be wrong first.
    const mediaType = Object.keys(operation.requestBody?.content ?? {})[0]
    const body = mediaType ? { headers: { ...admin, 'content-type': mediaType }, payload: '{}' } : { headers: admin }
    for (const id of NON_CANONICAL) {
      // Any other path parameter (a delivery's id beside its endpoint's) gets a valid value.
      const url = prefix + path.replace('{id}', id).replace(/\{[^}]+\}/g, '1')
      const response = await app.inject({ method: method as 'GET', url, ...body })
      const label = `${operation.operationId} ${method} ${url}`
      t.equal(response.statusCode, 400, label)
      t.match(response.headers['content-type'], /^application\/problem\+json/, label)
      const problem = response.json()
      t.equal(problem.code, 'VALIDATION_FAILED', label)
      t.same(
        problem.errors.map((error: { in: string; name: string }) => [error.in, error.name]),
        [['path', 'id']],
        `${label} names the path id`,
      )
    }
  }
})

t.test('a non-canonical id reaches no record: 16 is there, 0x10 is refused and deletes nothing', async (t) => {
  const app = await build(t)
  const admin = bearer(1, 'admin')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/3', headers: admin })).statusCode, 200, 'user 3 exists')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/03', headers: admin })).statusCode, 400)
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/articles/0x1', headers: admin })).statusCode, 400)
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/articles/1.0', headers: admin })).statusCode, 400)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/articles/1', headers: admin })).statusCode, 200, 'article 1 is still there')
})

/** One GraphQL operation per ID argument or input field, with `$id` in its place. */
const GRAPHQL_CASES: Record<string, string> = {
  'Query.user.id': 'query($id: ID!) { user(id: $id) { id } }',
  'Query.order.id': 'query($id: ID!) { order(id: $id) { id } }',
  'Query.orders.userId': 'query($id: ID) { orders(userId: $id) { id } }',
  'Query.ordersConnection.userId': 'query($id: ID) { ordersConnection(userId: $id) { edges { cursor } } }',
  'Query.article.id': 'query($id: ID!) { article(id: $id) { id } }',
  'Query.node.id': 'query($id: ID!) { node(id: $id) { id } }',
  'Query.nodes.ids': 'query($id: ID!) { nodes(ids: [$id]) { id } }',
  'Mutation.updateOrder.id': 'mutation($id: ID!) { updateOrder(id: $id, input: { items: [{ sku: "KB-101", qty: 1 }] }) { id } }',
  'Mutation.payOrder.id': 'mutation($id: ID!) { payOrder(id: $id) { id } }',
  'Mutation.cancelOrder.id': 'mutation($id: ID!) { cancelOrder(id: $id) { id } }',
  'Mutation.refundOrder.id': 'mutation($id: ID!) { refundOrder(id: $id) { id } }',
  'Mutation.deleteOrder.id': 'mutation($id: ID!) { deleteOrder(id: $id) }',
  'Mutation.updateArticle.id': 'mutation($id: ID!) { updateArticle(id: $id, input: { title: "Edited" }) { id } }',
  'Mutation.deleteArticle.id': 'mutation($id: ID!) { deleteArticle(id: $id) }',
  'Mutation.addComment.articleId': 'mutation($id: ID!) { addComment(articleId: $id, input: { body: "Hi" }) { id } }',
  'Mutation.createUser.input.companyId': 'mutation($id: ID) { createUser(input: { name: "Ida", companyId: $id }) { id } }',
}

function idInputs(type: GraphQLInputType, path: string, seen = new Set<string>()): string[] {
  const named = getNamedType(type)
  if (named.name === 'ID') return [path]
  if (!isInputObjectType(named) || seen.has(named.name)) return []
  seen.add(named.name)
  return Object.values(named.getFields()).flatMap((field) => idInputs(getNullableType(field.type), `${path}.${field.name}`, seen))
}

t.test('every GraphQL ID argument of Query and Mutation is BAD_USER_INPUT when not canonical', async (t) => {
  const schema = buildSchema(await readFile(new URL('../schema.graphql', import.meta.url), 'utf8'))
  const idArguments = [schema.getQueryType()!, schema.getMutationType()!].flatMap((type) =>
    Object.values(type.getFields()).flatMap((field) =>
      field.args.flatMap((arg) => idInputs(arg.type, `${type.name}.${field.name}.${arg.name}`)),
    ),
  )
  t.same([...idArguments].sort(), Object.keys(GRAPHQL_CASES).sort(), 'the cases cover every ID argument of the schema')

  const app = await build(t, { env: { RATE_LIMIT_MAX: '1000000' } })
  const admin = bearer(1, 'admin')
  for (const [argument, query] of Object.entries(GRAPHQL_CASES)) {
    // A global id of a type the argument does not name is refused too (node and nodes take any type's).
    const otherType = argument.startsWith('Query.node') ? [] : [toGlobalId('Comment', 1)]
    for (const id of ['0x10', '3.0', ' 3', '+3', '03', '1e1', '0', '2147483648', ...otherType]) {
      const response = await gql(app, { query, variables: { id } }, admin)
      const error = response.json().errors?.[0]
      t.equal(error?.extensions.code, 'BAD_USER_INPUT', `${argument} = ${JSON.stringify(id)}`)
      t.match(error?.extensions.errors?.[0], { name: argument.split('.').slice(2).join('.') }, `${argument}: the error names it`)
    }
  }
  const canonical = await gql(app, { query: GRAPHQL_CASES['Query.user.id'], variables: { id: '3' } }, admin)
  t.same(canonical.json().data, { user: { id: toGlobalId('User', 3) } }, 'a canonical id is read as written')
  const articles = await gql(app, '{ article(id: 1) { databaseId } }', admin)
  t.same(articles.json().data, { article: { databaseId: 1 } }, 'article 1 survived every refused deleteArticle')
})
