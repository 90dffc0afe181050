// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The GraphQL contract (schema.graphql) and what is ours in its code generator (codegen/graphql.ts):
 * the schema is valid, canonical, fully described and has the spec's shapes; the generator is
 * deterministic, lists the root fields, and allow-lists each operation by the hash of its text.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  print,
  printSchema,
  validateSchema,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql'
import { generateGraphqlFiles } from '../../codegen/graphql.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const sdl = await readFile(join(root, 'schema.graphql'), 'utf8')

/** `name(arg: Type = default, …): Type`, read from the built schema's type objects. */
function signature(field: GraphQLField<unknown, unknown>): string {
  const args = field.args.map((arg) => {
    const fallback = arg.astNode?.defaultValue ? ` = ${print(arg.astNode.defaultValue)}` : ''
    return `${arg.name}: ${arg.type.toString()}${fallback}`
  })
  return `${field.name}${args.length > 0 ? `(${args.join(', ')})` : ''}: ${field.type.toString()}`
}

/** A type reference as nested wrappers around the named type: ['!', ['[]', ['!', 'Item']]]. */
function structure(type: GraphQLType): unknown {
  if (isNonNullType(type)) return ['!', structure(type.ofType)]
  if (isListType(type)) return ['[]', structure(type.ofType)]
  return type.name
}

function signatures(schema: GraphQLSchema, typeName: string): string[] {
  const type = schema.getType(typeName)
  if (!isObjectType(type) && !isInterfaceType(type)) throw new Error(`${typeName} is not an object or interface type`)
  return Object.values(type.getFields()).map(signature)
}

function inputFields(schema: GraphQLSchema, typeName: string): string[] {
  const type = schema.getType(typeName)
  if (!isInputObjectType(type)) throw new Error(`${typeName} is not an input type`)
  return Object.values(type.getFields()).map((field) => `${field.name}: ${field.type.toString()}`)
}

t.test('schema.graphql builds into a valid schema', async (t) => {
  const schema = buildSchema(sdl)
  t.same(
    validateSchema(schema).map((error) => error.message),
    [],
  )
  t.equal(schema.getQueryType()?.name, 'Query')
  t.equal(schema.getMutationType()?.name, 'Mutation')
  t.equal(schema.getSubscriptionType()?.name, 'Subscription')
})

t.test('schema.graphql is in the canonical printSchema form, so the served SDL and introspection agree', async (t) => {
  const printed = printSchema(buildSchema(sdl))
  // printSchema prints no applied directive but @deprecated and @specifiedBy (introspection shows
  // none): the SDL is canonical once its @requiresScopes usages, the scopes' contract, are set aside.
  t.equal(
    `${printed}\n`,
    sdl.replace(/ @requiresScopes\(scopes: \[[^\]]*\]\)/g, ''),
    `not canonical; reformat with: node --input-type=module -e "import{readFileSync as r,writeFileSync as w}from'node:fs';import{buildSchema as b,printSchema as p}from'graphql';w('schema.graphql',p(b(r('schema.graphql','utf8')))+'\\n')"`,
  )
  t.equal(printSchema(buildSchema(printed)), printed, 'printing is a fixed point')
})

t.test('the schema, every type, field, argument, enum value and input field has a description', async (t) => {
  const schema = buildSchema(sdl)
  const missing: string[] = []
  if (!schema.description?.trim()) missing.push('schema')
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || ['ID', 'String', 'Int', 'Float', 'Boolean'].includes(type.name)) continue
    if (!type.description?.trim()) missing.push(type.name)
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`)
        for (const arg of field.args) if (!arg.description?.trim()) missing.push(`${type.name}.${field.name}(${arg.name})`)
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`)
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) if (!value.description?.trim()) missing.push(`${type.name}.${value.name}`)
    }
  }
  t.same(missing, [])
  for (const word of [
    'Authorization: Bearer',
    'extensions.code',
    'FORBIDDEN',
    'COST_LIMIT_EXCEEDED',
    '10 levels',
    '5,000',
    'by the default page size 20',
  ]) {
    t.ok(schema.description?.includes(word), `the schema description mentions ${word}`)
  }
})

t.test('the spec shapes, checked on the built schema', async (t) => {
  const schema = buildSchema(sdl)
  const query = schema.getQueryType()!
  const user = query.getFields().user!
  t.equal(user.args.length, 1)
  t.equal(user.args[0]!.name, 'id')
  t.ok(isNonNullType(user.args[0]!.type) && user.args[0]!.type.ofType === schema.getType('ID'), 'Query.user(id: ID!)')
  t.equal(user.type, schema.getType('User'), 'Query.user returns the nullable User')

  const userType = schema.getType('User')
  const order = schema.getType('Order')
  if (!isObjectType(userType) || !isObjectType(order)) throw new Error('User and Order are object types')
  t.ok(isObjectType(schema.getType('Item')), 'Item is an object type')
  const orders = userType.getFields().orders!
  t.same(
    orders.args.map((arg) => [arg.name, structure(arg.type)]),
    [['last', 'Int']],
    'User.orders(last: Int)',
  )
  t.equal(orders.args[0]!.defaultValue, undefined, 'last has no default: the 20 most recent when omitted')
  t.same(structure(orders.type), ['!', ['[]', ['!', 'Order']]], 'User.orders: [Order!]!')
  t.same(structure(order.getFields().id!.type), ['!', 'ID'], 'Order.id: ID!')
  t.same(structure(order.getFields().total!.type), ['!', 'Int'], 'Order.total: Int!')
  t.same(structure(order.getFields().items!.type), ['!', ['[]', ['!', 'Item']]], 'Order.items: [Item!]!')
  // The same, as printed type references.
  t.equal(signature(query.getFields().user!), 'user(id: ID!): User')
  t.equal(signature(orders), 'orders(last: Int): [Order!]!')
  t.equal(signature(order.getFields().items!), 'items: [Item!]!')
})

t.test('the whole binding design, field by field', async (t) => {
  const schema = buildSchema(sdl)
  t.same(signatures(schema, 'Query'), [
    'user(id: ID!): User',
    'me: User!',
    'users(first: Int = 20, after: String): [User!]!',
    'usersConnection(first: Int = 20, after: String): UserConnection!',
    'order(id: ID!): Order',
    'orders(status: OrderStatus, userId: ID, first: Int = 20, after: String): [Order!]!',
    'ordersConnection(status: OrderStatus, userId: ID, first: Int = 20, after: String): OrderConnection!',
    'article(id: ID!): Article',
    'articles(first: Int = 20, after: String): [Article!]!',
    'articlesConnection(first: Int = 20, after: String): ArticleConnection!',
    'node(id: ID!): Node',
    'nodes(ids: [ID!]!): [Node]!',
    'product(sku: String!): Product',
    'products(first: Int = 20, after: String): [Product!]!',
    'productsConnection(first: Int = 20, after: String): ProductConnection!',
  ])
  t.same(signatures(schema, 'Mutation'), [
    'createOrder(input: CreateOrderInput!, idempotencyKey: String): Order',
    'updateOrder(id: ID!, input: UpdateOrderInput!): Order',
    'payOrder(id: ID!, reason: String, idempotencyKey: String): Order',
    'cancelOrder(id: ID!, reason: String, idempotencyKey: String): Order',
    'refundOrder(id: ID!, reason: String, idempotencyKey: String): Order',
    'deleteOrder(id: ID!): ID',
    'createArticle(input: CreateArticleInput!, idempotencyKey: String): Article',
    'updateArticle(id: ID!, input: UpdateArticleInput!): Article',
    'deleteArticle(id: ID!): ID',
    'addComment(articleId: ID!, input: AddCommentInput!, idempotencyKey: String): Comment',
    'createUser(input: CreateUserInput!, idempotencyKey: String): User',
    'createProduct(input: CreateProductInput!, idempotencyKey: String): Product',
  ])
  t.same(signatures(schema, 'Subscription'), [
    'orderStatusChanged(orderId: ID, after: ID): Order!',
    'orderCreated(after: ID): Order!',
    'commentAdded(articleId: ID!, after: ID): Comment!',
  ])
  t.same(signatures(schema, 'User'), [
    'id: ID!',
    'databaseId: Int!',
    'name: String!',
    'createdAt: DateTime!',
    'company: Company',
    'orders(last: Int): [Order!]!',
    'cursor: String!',
  ])
  t.same(signatures(schema, 'Company'), ['id: ID!', 'databaseId: Int!', 'name: String!'])
  t.same(signatures(schema, 'Order'), [
    'id: ID!',
    'databaseId: Int!',
    'status: OrderStatus!',
    'total: Int!',
    'items: [Item!]!',
    'user: User!',
    'createdAt: DateTime!',
    'updatedAt: DateTime!',
    'cursor: String!',
  ])
  t.same(signatures(schema, 'Item'), ['id: ID!', 'sku: String!', 'qty: Int!', 'unitPrice: Int!', 'product: Product'])
  t.same(signatures(schema, 'Product'), ['id: ID!', 'sku: String!', 'name: String!', 'price: Int!', 'cursor: String!'])
  t.same(signatures(schema, 'Author'), ['id: ID!', 'databaseId: Int!', 'name: String!'])
  t.same(signatures(schema, 'Article'), [
    'id: ID!',
    'databaseId: Int!',
    'title: String!',
    'body: String!',
    'createdAt: DateTime!',
    'updatedAt: DateTime!',
    'author: Author!',
    'comments(first: Int = 20, after: String): [Comment!]!',
    'commentsConnection(first: Int = 20, after: String): CommentConnection!',
    'cursor: String!',
  ])
  t.same(signatures(schema, 'Comment'), [
    'id: ID!',
    'databaseId: Int!',
    'body: String!',
    'createdAt: DateTime!',
    'author: Author!',
    'article: Article!',
    'cursor: String!',
  ])
  // Global object identification (decisions §13). Every type with an identity is a Node, an order's line item included.
  t.same(signatures(schema, 'Node'), ['id: ID!'])
  const node = schema.getType('Node')
  t.same(
    node && isInterfaceType(node) ? schema.getPossibleTypes(node).map((type) => type.name) : [],
    ['User', 'Company', 'Order', 'Item', 'Product', 'Author', 'Article', 'Comment'],
    'the Node types',
  )
  t.same(inputFields(schema, 'OrderItemInput'), ['sku: String!', 'qty: Int!'])
  t.same(inputFields(schema, 'CreateOrderInput'), ['items: [OrderItemInput!]!'])
  t.same(inputFields(schema, 'UpdateOrderInput'), ['items: [OrderItemInput!]!'])
  t.same(inputFields(schema, 'CreateArticleInput'), ['title: String!', 'body: String!'])
  t.same(inputFields(schema, 'UpdateArticleInput'), ['title: String', 'body: String'])
  t.same(inputFields(schema, 'AddCommentInput'), ['body: String!'])
  t.same(inputFields(schema, 'CreateUserInput'), ['name: String!', 'companyId: ID'])
  t.same(inputFields(schema, 'CreateProductInput'), ['sku: String!', 'name: String!', 'price: Int!'])

  const status = schema.getType('OrderStatus')
  t.ok(isEnumType(status))
  if (isEnumType(status))
    t.same(
      status.getValues().map((value) => value.name),
      ['pending', 'paid', 'cancelled', 'refunded'],
    )
  t.ok(schema.getType('DateTime'), 'scalar DateTime')
  // Connections beside the lists; the record-carried cursors are deprecated, not removed. A
  // connection counts its records where the REST list has page.total (decisions §16): not comments.
  t.same(signatures(schema, 'PageInfo'), ['hasNextPage: Boolean!', 'hasPreviousPage: Boolean!', 'startCursor: String', 'endCursor: String'])
  for (const record of ['Order', 'User', 'Article', 'Product', 'Comment']) {
    const counted = record === 'Comment' ? [] : ['totalCount: Int!']
    t.same(signatures(schema, `${record}Connection`), [`edges: [${record}Edge!]!`, 'pageInfo: PageInfo!', ...counted])
    t.same(signatures(schema, `${record}Edge`), ['cursor: String!', `node: ${record}!`])
    const cursor = (schema.getType(record) as GraphQLObjectType).getFields().cursor!
    t.match(cursor.deprecationReason, /edges\.cursor/, `${record}.cursor is deprecated in favour of the edge's cursor`)
  }
  const dateTime = schema.getType('DateTime')
  t.equal(
    dateTime && 'specifiedByURL' in dateTime ? dateTime.specifiedByURL : undefined,
    'https://scalars.graphql.org/andimarek/date-time',
    'DateTime names its specification',
  )
  t.match(dateTime?.description, /ISO 8601/)
  const own = Object.keys(schema.getTypeMap())
    .filter((name) => !name.startsWith('__'))
    .sort()
  t.same(
    own,
    [
      'AddCommentInput',
      'Article',
      'ArticleConnection',
      'ArticleEdge',
      'Author',
      'Boolean',
      'Comment',
      'CommentConnection',
      'CommentEdge',
      'Company',
      'CreateArticleInput',
      'CreateOrderInput',
      'CreateProductInput',
      'CreateUserInput',
      'DateTime',
      'ID',
      'Int',
      'Item',
      'Mutation',
      'Node',
      'Order',
      'OrderConnection',
      'OrderEdge',
      'OrderItemInput',
      'OrderStatus',
      'PageInfo',
      'Product',
      'ProductConnection',
      'ProductEdge',
      'Query',
      'String',
      'Subscription',
      'UpdateArticleInput',
      'UpdateOrderInput',
      'User',
      'UserConnection',
      'UserEdge',
    ],
    'no type beyond the design',
  )
})

t.test('codegen is deterministic, lists the root fields, and allow-lists each operation by the hash of its text', async (t) => {
  const files = await generateGraphqlFiles(root)
  t.same(await generateGraphqlFiles(root), files, 'a second run writes the same')
  const [types, operations, manifest] = files.map((file) => file.contents)
  t.match(types, `export const rootFields = {\n  Query: ${JSON.stringify(Object.keys(buildSchema(sdl).getQueryType()!.getFields()))},`)
  for (const [hash, query] of Object.entries(JSON.parse(manifest!) as Record<string, string>)) {
    t.equal(createHash('sha256').update(query).digest('hex'), hash, 'keyed by the SHA-256 of the exact text')
    t.ok(operations?.includes(`"sha256Hash": "${hash}",\n  "query": ${JSON.stringify(query)}`), 'its typed document carries both')
  }
})

t.test('an operation that does not validate against the schema is refused', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'graphql-codegen-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  for (const path of ['schema.graphql', 'operations']) await cp(join(root, path), join(dir, path), { recursive: true })
  await writeFile(join(dir, 'operations/Bad.graphql'), 'query Bad { order(id: 1) { shipped } }\n')
  await t.rejects(generateGraphqlFiles(dir), /Cannot query field "shipped" on type "Order"[\s\S]*operations\/Bad.graphql/)
})
