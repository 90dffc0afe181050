/**
 * The permission matrix as the contracts write it (decisions §2): the scopes of every REST operation
 * (`x-required-scopes` in openapi.yaml) and of every GraphQL field (`@requiresScopes` in
 * schema.graphql) are read from the contract files themselves, not from the generated table, so a
 * contract edited without `npm run codegen` fails here too. Each operation runs with no scope, with
 * exactly the scopes it requires, with every known scope but one of them, and with `admin`; where
 * ownership applies, as the record's owner and as another user. A cell the contract allows must
 * not be refused (no 401 or 403, no UNAUTHENTICATED or FORBIDDEN); a cell it denies must be 403
 * problem+json with code FORBIDDEN, or a GraphQL error with extensions.code FORBIDDEN.
 */
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSchema, getDirectiveValues, isObjectType } from 'graphql'
import t, { type Test } from 'tap'
import { parse } from 'yaml'
import { SCOPES } from '../../src/auth/caller.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'
import { listening, rawConnection } from '../graphql/subscription-clients.ts'
import { bearer, build, gql, tokenFor } from '../helper.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const OWNER = 2
const OTHER = 3

// ---- The contracts, read as a client would ----

type Json = Record<string, any>
const openapi = parse(await readFile(join(root, 'openapi.yaml'), 'utf8')) as Json
const schema = buildSchema(await readFile(join(root, 'schema.graphql'), 'utf8'))

interface RestOperation {
  method: string
  path: string
  scopes: string[]
  mediaType: string | undefined
}

const restOperations = new Map<string, RestOperation>()
for (const [path, item] of Object.entries(openapi.paths as Json)) {
  for (const [method, operation] of Object.entries(item as Json)) {
    if (typeof operation !== 'object' || operation === null || !('operationId' in operation)) continue
    const body = operation.requestBody?.$ref
      ? openapi.components.requestBodies[operation.requestBody.$ref.split('/').at(-1)]
      : operation.requestBody
    // A body goes as application/json, which every operation with a body accepts.
    const mediaType = body ? Object.keys(body.content).find((type) => type === 'application/json') : undefined
    restOperations.set(operation.operationId, {
      method: method.toUpperCase(),
      path,
      scopes: operation['x-required-scopes'] ?? [],
      mediaType,
    })
  }
}

/** `Type.field` → scopes: every field with @requiresScopes, and every root field (none when it has no directive). */
const graphqlFields = new Map<string, string[]>()
const directive = schema.getDirective('requiresScopes')
const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]
for (const type of Object.values(schema.getTypeMap())) {
  if (!isObjectType(type) || type.name.startsWith('__')) continue
  for (const field of Object.values(type.getFields())) {
    const values = directive && field.astNode ? getDirectiveValues(directive, field.astNode) : undefined
    if (values) graphqlFields.set(`${type.name}.${field.name}`, values.scopes as string[])
    else if (roots.includes(type)) graphqlFields.set(`${type.name}.${field.name}`, [])
  }
}

// ---- How to call each operation (the rules of ownership are the services', so they are here) ----

interface Fixture {
  order: number
  article: number
  unique: string
}

interface Recipe {
  /** The record belongs to OWNER: another user is refused unless an admin. */
  ownership?: boolean
  /** The call consumes its record (a deletion): every cell gets a fresh one. */
  fresh?: boolean
}

interface RestRecipe extends Recipe {
  params?: (f: Fixture) => Record<string, string | number>
  body?: (f: Fixture) => object
}

const items = () => ({ items: [{ sku: 'MS-202', qty: 1 }] })
const order = (f: Fixture) => ({ id: f.order })
const article = (f: Fixture) => ({ id: f.article })
const owner = () => ({ id: OWNER })

const restRecipes: Record<string, RestRecipe> = {
  listOrders: {},
  createOrder: { body: items },
  getOrder: { ownership: true, params: order },
  replaceOrder: { ownership: true, params: order, body: items },
  updateOrder: { ownership: true, params: order, body: items },
  deleteOrder: { ownership: true, fresh: true, params: order },
  listOrderItems: { ownership: true, params: order },
  payOrder: { ownership: true, params: order, body: () => ({}) },
  cancelOrder: { ownership: true, params: order, body: () => ({}) },
  refundOrder: { ownership: true, params: order, body: () => ({}) },
  listArticles: {},
  createArticle: { body: () => ({ title: 'New', body: 'Text' }) },
  getArticle: { params: article },
  replaceArticle: { ownership: true, params: article, body: () => ({ title: 'Replaced', body: 'Text' }) },
  updateArticle: { ownership: true, params: article, body: () => ({ title: 'Edited' }) },
  deleteArticle: { ownership: true, fresh: true, params: article },
  listArticleComments: { params: article },
  createArticleComment: { params: article, body: () => ({ body: 'A comment' }) },
  listUsers: {},
  createUser: { body: () => ({ name: 'New User' }) },
  getUser: { ownership: true, params: owner },
  listUserOrders: { ownership: true, params: owner },
  listProducts: {},
  createProduct: { body: (f) => ({ sku: `R-${f.unique}`, name: 'Thing', price: 100 }) },
  listEvents: {},
}

/** Operations not run here, and why; none may require a scope (a contract that adds one must add a recipe). */
const restNotRun: Record<string, string> = {
  streamEvents: 'a stream that stays open (test/modules/events)',
  getOpenApiJson: 'served without a credential',
  getOpenApiYaml: 'served without a credential',
  listWebhookEndpoints: "the owner's rule only (test/modules/webhooks)",
  createWebhookEndpoint: "the owner's rule only (test/modules/webhooks)",
  getWebhookEndpoint: "the owner's rule only (test/modules/webhooks)",
  deleteWebhookEndpoint: "the owner's rule only (test/modules/webhooks)",
  listWebhookDeliveries: "the owner's rule only (test/modules/webhooks)",
  retryWebhookDelivery: "the owner's rule only (test/modules/webhooks)",
  listWebhookDeliveryAttempts: "the owner's rule only (test/modules/webhooks)",
  createEventStreamTicket: 'any valid token, no scope (test/modules/events/stream-tickets.test.ts)',
}

interface GraphqlRecipe extends Recipe {
  query: (f: Fixture) => string
  /**
   * Run over the WebSocket with an `after` that is no event id: its check comes after authorization,
   * so an allowed subscription is refused at once as BAD_USER_INPUT, a denied one as FORBIDDEN.
   */
  subscription?: boolean
}

const gid = (type: 'Article', id: number) => JSON.stringify(toGlobalId(type, id))
const orderItems = '{ items: [{ sku: "MS-202", qty: 1 }] }'

const graphqlRecipes: Record<string, GraphqlRecipe> = {
  'Query.user': { ownership: true, query: () => `{ user(id: ${OWNER}) { id } }` },
  'Query.me': { query: () => '{ me { id } }' },
  'Query.users': { query: () => '{ users(first: 1) { id } }' },
  'Query.usersConnection': { query: () => '{ usersConnection(first: 1) { edges { cursor } } }' },
  'Query.order': { ownership: true, query: (f) => `{ order(id: ${f.order}) { id } }` },
  'Query.orders': { query: () => '{ orders(first: 1) { id } }' },
  'Query.ordersConnection': { query: () => '{ ordersConnection(first: 1) { edges { cursor } } }' },
  'Query.article': { query: (f) => `{ article(id: ${f.article}) { id } }` },
  'Query.articles': { query: () => '{ articles(first: 1) { id } }' },
  'Query.articlesConnection': { query: () => '{ articlesConnection(first: 1) { edges { cursor } } }' },
  'Query.node': { query: (f) => `{ node(id: ${gid('Article', f.article)}) { id } }` },
  'Query.nodes': { query: (f) => `{ nodes(ids: [${gid('Article', f.article)}]) { id } }` },
  'Query.product': { query: () => '{ product(sku: "KB-101") { sku } }' },
  'Query.products': { query: () => '{ products(first: 1) { sku } }' },
  'Query.productsConnection': { query: () => '{ productsConnection(first: 1) { edges { cursor } } }' },
  'Mutation.createOrder': { query: () => `mutation { createOrder(input: ${orderItems}) { id } }` },
  'Mutation.updateOrder': { ownership: true, query: (f) => `mutation { updateOrder(id: ${f.order}, input: ${orderItems}) { id } }` },
  'Mutation.payOrder': { ownership: true, query: (f) => `mutation { payOrder(id: ${f.order}) { id } }` },
  'Mutation.cancelOrder': { ownership: true, query: (f) => `mutation { cancelOrder(id: ${f.order}) { id } }` },
  'Mutation.refundOrder': { ownership: true, query: (f) => `mutation { refundOrder(id: ${f.order}) { id } }` },
  'Mutation.deleteOrder': { ownership: true, fresh: true, query: (f) => `mutation { deleteOrder(id: ${f.order}) }` },
  'Mutation.createArticle': { query: () => 'mutation { createArticle(input: { title: "New", body: "Text" }) { id } }' },
  'Mutation.updateArticle': {
    ownership: true,
    query: (f) => `mutation { updateArticle(id: ${f.article}, input: { title: "Edited" }) { id } }`,
  },
  'Mutation.deleteArticle': { ownership: true, fresh: true, query: (f) => `mutation { deleteArticle(id: ${f.article}) }` },
  'Mutation.addComment': { query: (f) => `mutation { addComment(articleId: ${f.article}, input: { body: "Hi" }) { id } }` },
  'Mutation.createUser': { query: () => 'mutation { createUser(input: { name: "New User" }) { id } }' },
  'Mutation.createProduct': {
    query: (f) => `mutation { createProduct(input: { sku: "G-${f.unique}", name: "Thing", price: 100 }) { sku } }`,
  },
  'Subscription.orderStatusChanged': { subscription: true, query: () => 'subscription { orderStatusChanged(after: "none") { id } }' },
  'Subscription.orderCreated': { subscription: true, query: () => 'subscription { orderCreated(after: "none") { id } }' },
  'Subscription.commentAdded': {
    subscription: true,
    query: (f) => `subscription { commentAdded(articleId: ${f.article}, after: "none") { id } }`,
  },
  'User.orders': { ownership: true, query: () => `{ user(id: ${OWNER}) { orders(last: 1) { id } } }` },
}

// ---- The cells ----

type Outcome = 'allowed' | 'denied'

interface Cell {
  scopes: string[]
  user: number
  expected: Outcome
  label: string
}

/** No scope, exactly the required ones, all known scopes but one of them (each), admin; as owner and other user where ownership applies. */
function cellsOf(required: readonly string[], ownership: boolean): Cell[] {
  const sets = new Map<string, string[]>()
  const add = (scopes: string[]) => sets.set([...scopes].sort().join(' '), scopes)
  add([])
  add([...required])
  for (const missing of required) add(SCOPES.filter((scope) => scope !== missing && scope !== 'admin'))
  add(['admin'])
  const users = ownership ? [OWNER, OTHER] : [OWNER]
  return users.flatMap((user) =>
    [...sets.values()].map((scopes) => {
      const admin = scopes.includes('admin')
      const scoped = required.every((scope) => admin || scopes.includes(scope))
      const expected: Outcome = scoped && (user === OWNER || admin) ? 'allowed' : 'denied'
      const who = ownership ? (user === OWNER ? 'owner' : 'other user') : 'caller'
      return { scopes, user, expected, label: `${who} with [${scopes.join(' ')}]` }
    }),
  )
}

function restOutcome(t: Test, response: { statusCode: number; headers: Json; body: string }, where: string): Outcome {
  if (response.statusCode === 403) {
    t.match(response.headers['content-type'], /^application\/problem\+json/, `${where}: a refusal is problem+json`)
    t.equal(JSON.parse(response.body).code, 'FORBIDDEN', `${where}: code FORBIDDEN`)
    return 'denied'
  }
  t.ok(response.statusCode !== 401 && response.statusCode < 500, `${where}: ${response.statusCode} is an answer, not a failure`)
  return 'allowed'
}

function graphqlOutcome(t: Test, errors: Array<{ extensions?: { code?: string } }> | undefined, where: string): Outcome {
  const codes = (errors ?? []).map((error) => error.extensions?.code)
  if (codes.includes('FORBIDDEN')) {
    t.same([...new Set(codes)], ['FORBIDDEN'], `${where}: every error is FORBIDDEN`)
    return 'denied'
  }
  t.notOk(codes.includes('UNAUTHENTICATED') || codes.includes('INTERNAL_SERVER_ERROR'), `${where}: ${codes.join(', ') || 'no error'}`)
  return 'allowed'
}

t.test('every contract operation that needs a scope has a recipe here', async (t) => {
  for (const [id, operation] of restOperations) {
    if (id in restNotRun) t.same(operation.scopes, [], `${id} is not run here, so its contract requires no scope`)
    else t.ok(restRecipes[id], `a recipe for REST ${id}`)
  }
  for (const id of Object.keys(restRecipes)) t.ok(restOperations.has(id), `openapi.yaml has ${id}`)
  for (const field of graphqlFields.keys()) t.ok(graphqlRecipes[field], `a recipe for GraphQL ${field}`)
  for (const field of Object.keys(graphqlRecipes))
    t.ok(graphqlFields.has(field), `schema.graphql has ${field} (a root field or one with @requiresScopes)`)
})

t.test('REST and GraphQL allow and deny what the contracts say, scope set by scope set', async (t) => {
  const app = await build(t)
  const ws = await listening(app)
  let counter = 0
  const writer = bearer(OWNER, 'orders:write articles:write')
  const create = async (): Promise<Fixture> => {
    const created = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: writer, payload: items() })
    const written = await app.inject({ method: 'POST', url: '/api/v1/articles', headers: writer, payload: { title: 'Mine', body: 'Text' } })
    return { order: created.json().id, article: written.json().id, unique: `${process.pid}-${counter++}` }
  }
  // The records the cells share; a deletion gets its own.
  const shared = await create()
  const fixture = async (recipe: Recipe) => (recipe.fresh ? create() : { ...shared, unique: `${process.pid}-${counter++}` })

  const results: string[] = []
  for (const [id, operation] of restOperations) {
    const recipe = restRecipes[id]
    if (!recipe) continue
    for (const cell of cellsOf(operation.scopes, recipe.ownership ?? false)) {
      const f = await fixture(recipe)
      const params = recipe.params?.(f) ?? {}
      const url = `/api/v1${operation.path.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name]))}`
      const body = recipe.body?.(f)
      const response = await app.inject({
        method: operation.method as 'GET',
        url,
        headers: { ...bearer(cell.user, cell.scopes.join(' ')), ...(body ? { 'content-type': operation.mediaType } : {}) },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      })
      const where = `REST ${id}, ${cell.label}`
      t.equal(restOutcome(t, response, where), cell.expected, `${where}: ${cell.expected}`)
      results.push(`${where}: ${cell.expected}`)
    }
  }

  for (const [field, required] of graphqlFields) {
    const recipe = graphqlRecipes[field]
    if (!recipe) continue
    for (const cell of cellsOf(required, recipe.ownership ?? false)) {
      const f = await fixture(recipe)
      const where = `GraphQL ${field}, ${cell.label}`
      let outcome: Outcome
      if (recipe.subscription) {
        const connection = await rawConnection(t, ws)
        await connection.init(tokenFor(cell.user, cell.scopes.join(' ')))
        connection.send({ id: '1', type: 'subscribe', payload: { query: recipe.query(f) } })
        const { payload } = await connection.next('error')
        connection.socket.close()
        const errors = payload as Array<{ extensions?: { code?: string } }>
        outcome = graphqlOutcome(t, errors, where)
        if (outcome === 'allowed') t.equal(errors[0]?.extensions?.code, 'BAD_USER_INPUT', `${where}: past authorization, to its arguments`)
      } else {
        const response = await gql(app, { query: recipe.query(f) }, bearer(cell.user, cell.scopes.join(' ')))
        outcome = graphqlOutcome(t, response.json().errors, where)
      }
      t.equal(outcome, cell.expected, `${where}: ${cell.expected}`)
      results.push(`${where}: ${cell.expected}`)
    }
  }
  // The matrix is not uniform: both answers occur in both styles.
  for (const style of ['REST', 'GraphQL'])
    for (const outcome of ['allowed', 'denied'])
      t.ok(
        results.some((line) => line.startsWith(style) && line.endsWith(outcome)),
        `${style} has ${outcome} cells`,
      )
})
