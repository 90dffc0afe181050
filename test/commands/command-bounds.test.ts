/**
 * One contract on both styles (decisions §3, §12): every bound of every command, at and past each
 * edge, gets the same verdict through REST and through GraphQL — accepted by both, or refused by
 * both (REST 400 VALIDATION_FAILED, GraphQL BAD_USER_INPUT naming the same fields as arguments) —
 * and a refused GraphQL mutation stores nothing.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, build } from '../helper.ts'

const admin = bearer(1, 'orders:read orders:write articles:write admin')
const grace = bearer(2, 'orders:read orders:write articles:write')

const text = (length: number) => 'x'.repeat(length)
const items = (count: number, qty = 1) => Array.from({ length: count }, () => ({ sku: 'CB-404', qty }))

interface Verdict {
  accepted: boolean
  /** The offending fields, named as REST names them (JSON pointers into the body). */
  fields: string[]
}

/** A GraphQL argument path (`input.items.0.qty`, `reason`) as the REST body pointer it stands for. */
function asPointer(name: string, argument: string): string {
  const path = argument === '' ? name : name.slice(argument.length + 1)
  return `/${path
    .split('.')
    .map((segment) => segment.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`))
    .join('/')}`
}

async function restVerdict(
  app: FastifyInstance,
  request: { method: 'POST' | 'PUT' | 'PATCH'; url: string; headers: Record<string, string>; payload: unknown },
): Promise<Verdict> {
  const response = await app.inject({ ...request, payload: request.payload as Record<string, unknown> })
  if (response.statusCode < 300) return { accepted: true, fields: [] }
  const problem = response.json() as { code: string; errors?: Array<{ name: string }> }
  if (response.statusCode !== 400 || problem.code !== 'VALIDATION_FAILED')
    throw new Error(`REST answered ${response.statusCode} ${response.body}`)
  return { accepted: false, fields: (problem.errors ?? []).map((error) => error.name).sort() }
}

async function graphqlVerdict(
  app: FastifyInstance,
  headers: Record<string, string>,
  query: string,
  variables: Record<string, unknown>,
  argument: string,
): Promise<Verdict> {
  const response = await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } })
  const body = response.json() as {
    data: Record<string, unknown> | null
    errors?: Array<{ extensions: { code: string; errors?: Array<{ in: string; name: string }> } }>
  }
  if (!body.errors) return { accepted: true, fields: [] }
  const [error] = body.errors
  if (body.errors.length !== 1 || error?.extensions.code !== 'BAD_USER_INPUT') throw new Error(`GraphQL answered ${response.body}`)
  const fields = error.extensions.errors ?? []
  if (fields.some((field) => field.in !== 'argument')) throw new Error(`GraphQL named fields outside the arguments: ${response.body}`)
  return { accepted: false, fields: fields.map((field) => asPointer(field.name, argument)).sort() }
}

async function rowCounts(app: FastifyInstance): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of ['orders', 'order_items', 'articles', 'comments', 'users', 'products', 'outbox'] as const) {
    const row = await app.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow()
    counts[table] = Number(row.count)
  }
  return counts
}

interface Case {
  command: string
  bound: string
  /** The REST request; `fresh` makes a new pending order for a case that changes one. */
  rest: (
    fresh: () => Promise<number>,
  ) => Promise<{ method: 'POST' | 'PUT' | 'PATCH'; url: string; headers: Record<string, string>; payload: unknown }>
  graphql: (
    fresh: () => Promise<number>,
  ) => Promise<{ headers: Record<string, string>; query: string; variables: Record<string, unknown>; argument: string }>
  expected: 'accepted' | 'refused'
}

const createOrder = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }`
const updateOrder = `mutation ($id: ID!, $input: UpdateOrderInput!) { updateOrder(id: $id, input: $input) { id } }`
const cancelOrder = `mutation ($id: ID!, $reason: String) { cancelOrder(id: $id, reason: $reason) { id } }`
const createArticle = `mutation ($input: CreateArticleInput!) { createArticle(input: $input) { id } }`
const updateArticle = `mutation ($id: ID!, $input: UpdateArticleInput!) { updateArticle(id: $id, input: $input) { id } }`
const addComment = `mutation ($articleId: ID!, $input: AddCommentInput!) { addComment(articleId: $articleId, input: $input) { id } }`
const createUser = `mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }`
const createProduct = `mutation ($input: CreateProductInput!) { createProduct(input: $input) { sku } }`

let skuCounter = 0
const newSku = () => `BND-${++skuCounter}`

function orderCases(): Case[] {
  const cases: Case[] = []
  const verdict = (ok: boolean): Case['expected'] => (ok ? 'accepted' : 'refused')
  const itemSets: Array<[string, Array<{ sku: string; qty: number }>, boolean]> = [
    ['qty 0', items(1, 0), false],
    ['qty 1', items(1, 1), true],
    ['qty 1000', items(1, 1000), true],
    ['qty 1001', items(1, 1001), false],
    ['qty -1', items(1, -1), false],
    ['0 items', items(0), false],
    ['1 item', items(1), true],
    ['100 items', items(100), true],
    ['101 items', items(101), false],
    ['sku "-bad sku"', [{ sku: '-bad sku', qty: 1 }], false],
    ['sku of 65 characters', [{ sku: `A${text(64)}`, qty: 1 }], false],
  ]
  for (const [bound, set, ok] of itemSets) {
    cases.push({
      command: 'createOrder',
      bound,
      expected: verdict(ok),
      rest: async () => ({ method: 'POST', url: '/api/v1/orders', headers: grace, payload: { items: set } }),
      graphql: async () => ({ headers: grace, query: createOrder, variables: { input: { items: set } }, argument: 'input' }),
    })
    for (const method of ['PUT', 'PATCH'] as const) {
      cases.push({
        command: `updateOrder (${method})`,
        bound,
        expected: verdict(ok),
        rest: async (fresh) => ({ method, url: `/api/v1/orders/${await fresh()}`, headers: grace, payload: { items: set } }),
        graphql: async (fresh) => ({
          headers: grace,
          query: updateOrder,
          variables: { id: String(await fresh()), input: { items: set } },
          argument: 'input',
        }),
      })
    }
  }
  for (const [length, ok] of [
    [0, true],
    [500, true],
    [501, false],
  ] as const) {
    cases.push({
      command: 'cancelOrder',
      bound: `reason of ${length}`,
      expected: verdict(ok),
      rest: async (fresh) => ({
        method: 'POST',
        url: `/api/v1/orders/${await fresh()}/cancellation`,
        headers: grace,
        payload: { reason: text(length) },
      }),
      graphql: async (fresh) => ({
        headers: grace,
        query: cancelOrder,
        variables: { id: String(await fresh()), reason: text(length) },
        argument: '',
      }),
    })
  }
  return cases
}

function lengthCases(command: string, field: string, max: number, make: (value: string) => Pick<Case, 'rest' | 'graphql'>): Case[] {
  return (
    [
      [0, false],
      [1, true],
      [max, true],
      [max + 1, false],
    ] as const
  ).map(([length, ok]) => ({
    command,
    bound: `${field} of ${length}`,
    expected: ok ? 'accepted' : 'refused',
    ...make(text(length)),
  }))
}

function otherCases(): Case[] {
  return [
    ...lengthCases('createArticle', 'title', 200, (title) => ({
      rest: async () => ({ method: 'POST', url: '/api/v1/articles', headers: grace, payload: { title, body: 'b' } }),
      graphql: async () => ({ headers: grace, query: createArticle, variables: { input: { title, body: 'b' } }, argument: 'input' }),
    })),
    ...lengthCases('createArticle', 'body', 100_000, (body) => ({
      rest: async () => ({ method: 'POST', url: '/api/v1/articles', headers: grace, payload: { title: 't', body } }),
      graphql: async () => ({ headers: grace, query: createArticle, variables: { input: { title: 't', body } }, argument: 'input' }),
    })),
    ...lengthCases('updateArticle', 'title', 200, (title) => ({
      rest: async () => ({ method: 'PATCH', url: '/api/v1/articles/1', headers: admin, payload: { title } }),
      graphql: async () => ({ headers: admin, query: updateArticle, variables: { id: '1', input: { title } }, argument: 'input' }),
    })),
    ...lengthCases('updateArticle', 'body', 100_000, (body) => ({
      rest: async () => ({ method: 'PATCH', url: '/api/v1/articles/1', headers: admin, payload: { body } }),
      graphql: async () => ({ headers: admin, query: updateArticle, variables: { id: '1', input: { body } }, argument: 'input' }),
    })),
    ...lengthCases('addComment', 'body', 10_000, (body) => ({
      rest: async () => ({ method: 'POST', url: '/api/v1/articles/1/comments', headers: grace, payload: { body } }),
      graphql: async () => ({ headers: grace, query: addComment, variables: { articleId: '1', input: { body } }, argument: 'input' }),
    })),
    ...lengthCases('createUser', 'name', 200, (name) => ({
      rest: async () => ({ method: 'POST', url: '/api/v1/users', headers: admin, payload: { name } }),
      graphql: async () => ({ headers: admin, query: createUser, variables: { input: { name } }, argument: 'input' }),
    })),
    ...lengthCases('createProduct', 'name', 200, (name) => ({
      rest: async () => ({ method: 'POST', url: '/api/v1/products', headers: admin, payload: { sku: newSku(), name, price: 1 } }),
      graphql: async () => ({
        headers: admin,
        query: createProduct,
        variables: { input: { sku: newSku(), name, price: 1 } },
        argument: 'input',
      }),
    })),
    ...(
      [
        [-1, false],
        [0, true],
        [10_000_000, true],
        [10_000_001, false],
      ] as const
    ).map(
      ([price, ok]): Case => ({
        command: 'createProduct',
        bound: `price ${price}`,
        expected: ok ? 'accepted' : 'refused',
        rest: async () => ({ method: 'POST', url: '/api/v1/products', headers: admin, payload: { sku: newSku(), name: 'n', price } }),
        graphql: async () => ({
          headers: admin,
          query: createProduct,
          variables: { input: { sku: newSku(), name: 'n', price } },
          argument: 'input',
        }),
      }),
    ),
    ...(
      [
        ['-bad sku', false],
        ['A', true],
        [`A${text(63)}`, true],
        [`A${text(64)}`, false],
      ] as const
    ).map(
      ([sku, ok]): Case => ({
        command: 'createProduct',
        bound: `sku "${sku.slice(0, 12)}" (${sku.length})`,
        expected: ok ? 'accepted' : 'refused',
        // The same sku can be created once: REST and GraphQL each get their own variant of it.
        rest: async () => ({ method: 'POST', url: '/api/v1/products', headers: admin, payload: { sku, name: 'n', price: 1 } }),
        graphql: async () => ({
          headers: admin,
          query: createProduct,
          variables: { input: { sku: sku.replace(/^A/, 'B'), name: 'n', price: 1 } },
          argument: 'input',
        }),
      }),
    ),
  ]
}

t.test('every bound of every command: the same verdict through REST and GraphQL, and a refused mutation stores nothing', async (t) => {
  const app = await build(t)
  const fresh = async () => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: grace, payload: { items: items(1) } })
    return (response.json() as { id: number }).id
  }
  for (const testCase of [...orderCases(), ...otherCases()]) {
    const name = `${testCase.command}, ${testCase.bound}`
    const rest = await restVerdict(app, await testCase.rest(fresh))
    const graphqlRequest = await testCase.graphql(fresh)
    const before = await rowCounts(app)
    const graphql = await graphqlVerdict(
      app,
      graphqlRequest.headers,
      graphqlRequest.query,
      graphqlRequest.variables,
      graphqlRequest.argument,
    )
    t.equal(rest.accepted ? 'accepted' : 'refused', testCase.expected, `${name}: REST ${testCase.expected}`)
    t.same(graphql, rest, `${name}: GraphQL gives REST's verdict, naming the same fields`)
    if (!graphql.accepted) t.same(await rowCounts(app), before, `${name}: the refused GraphQL mutation stored nothing`)
  }
})

t.test('a GraphQL refusal names each field as an argument path', async (t) => {
  const app = await build(t)
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: grace,
    payload: {
      query: createOrder,
      variables: {
        input: {
          items: [
            { sku: 'CB-404', qty: 0 },
            { sku: '-bad sku', qty: 5000 },
          ],
        },
      },
    },
  })
  const [error] = response.json().errors
  t.equal(error.extensions.code, 'BAD_USER_INPUT')
  t.same(error.extensions.errors.map((field: { in: string; name: string }) => `${field.in}:${field.name}`).sort(), [
    'argument:input.items.0.qty',
    'argument:input.items.1.qty',
    'argument:input.items.1.sku',
  ])
  t.same(response.json().data, { createOrder: null }, 'the mutation field is null (partial success)')
})
