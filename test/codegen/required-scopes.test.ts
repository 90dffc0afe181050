// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * codegen/required-scopes.ts: the contracts' scopes become one table, and a policy the services
 * could not enforce as written stops generation (decisions §2).
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSchema } from 'graphql'
import { graphqlRequiredScopes, requiredScopesFileOf } from '../../codegen/required-scopes.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')

const sdl = (field: string) => `
directive @requiresScopes(scopes: [String!]!) on FIELD_DEFINITION
type Query { order(id: ID!): String ${field} ping: String }
type User { name: String orders: [String] @requiresScopes(scopes: ["orders:read"]) }
`
const rest = new Map<string, unknown[]>([
  ['getOrder', ['orders:read']],
  ['listUserOrders', ['orders:read']],
  ['getOpenApiJson', []],
])
const served = {
  getOrder: { rest: ['getOrder'], graphql: ['Query.order'] },
  listUserOrders: { rest: ['listUserOrders'], graphql: ['User.orders'] },
}
const generate = (field: string, services: Parameters<typeof requiredScopesFileOf>[2] = served) =>
  requiredScopesFileOf(rest, graphqlRequiredScopes(buildSchema(sdl(field))), services)

t.test('every root field is listed, with or without the directive, and other fields only with it', async (t) => {
  const fields = graphqlRequiredScopes(buildSchema(sdl('@requiresScopes(scopes: ["orders:read"])')))
  t.same(Object.fromEntries(fields), { 'Query.order': ['orders:read'], 'Query.ping': [], 'User.orders': ['orders:read'] })
})

t.test('a service operation enforces the scopes its operations agree on', async (t) => {
  const file = generate('@requiresScopes(scopes: ["orders:read"])')
  t.match(file.contents, /"getOrder": \["orders:read"\],\n {2}"listUserOrders": \["orders:read"\],\n}/)
  t.match(file.contents, /export type ServiceOperation =\n {2}\| "getOrder"\n {2}\| "listUserOrders"/)
})

t.test('REST and GraphQL operations of one service operation that name different scopes fail generation', async (t) => {
  t.throws(() => generate('@requiresScopes(scopes: ["orders:write"])'), {
    message:
      /service operation getOrder must require the same scopes, and do not: getOrder \["orders:read"\], Query.order \["orders:write"\]/,
  })
  t.throws(() => generate(''), { message: /getOrder \["orders:read"\], Query.order \[\]/ }, 'a field without the directive requires none')
})

t.test('an operation that needs a scope but no service operation serves fails generation', async (t) => {
  t.throws(() => generate('@requiresScopes(scopes: ["orders:read"])', { getOrder: served.getOrder }), {
    message: /listUserOrders, User.orders require scopes but no service operation serves them/,
  })
})

t.test('an unknown scope, an unknown operation or one served twice fails generation', async (t) => {
  t.throws(() => generate('@requiresScopes(scopes: ["orders:raed"])'), { message: /Query.order requires \["orders:raed"\], not a scope/ })
  t.throws(() => generate('', { ...served, getOrder: { rest: ['getOrders'], graphql: [] } }), {
    message: /openapi.yaml has no operationId getOrders/,
  })
  t.throws(() => generate('', { ...served, getOrder: { rest: ['getOrder'], graphql: ['Query.nope'] } }), {
    message: /schema.graphql has no root field or field with @requiresScopes Query.nope/,
  })
  t.throws(() => generate('', { ...served, getOrder: { rest: [], graphql: [] } }), { message: /getOrder serves no contract operation/ })
  t.throws(
    () =>
      generate('@requiresScopes(scopes: ["orders:read"])', {
        ...served,
        readOrder: { rest: ['getOrder'], graphql: [] },
      }),
    { message: /getOrder is served by two service operations, getOrder and readOrder/ },
  )
})

t.test('the committed table lists every operation of both contracts', async (t) => {
  const generated = await readFile(join(root, 'src/generated/required-scopes.ts'), 'utf8')
  t.match(generated, /"listUsers": \["admin"\]/)
  t.match(generated, /"Mutation.createProduct": \["admin"\]/)
  t.match(generated, /"User.orders": \["orders:read"\]/)
})
