/**
 * Depth, cost and the mutation count are measured on the operation that executes, whatever carries
 * it: the same document and operationName get the same verdict over POST, GET, automatic persisted
 * queries and the allow-list, and a refused one runs no SQL.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Response as LightMyRequestResponse } from 'light-my-request'
import { bearer, build, gql } from '../helper.ts'

const admin = { ...bearer(1, 'admin'), accept: 'application/graphql-response+json' }
const grace = { ...bearer(2, 'orders:read orders:write'), accept: 'application/graphql-response+json' }
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

// The issue's document: its first operation is free, the one it names over GET is not.
const ISSUE_DOCUMENT =
  'query Cheap { __typename } query X { orders(first: 100) { id user { orders(last: 100) { id user { orders(last: 100) { id } } } } } }'
const DOCUMENT = `${ISSUE_DOCUMENT}
query Small { orders(first: 2) { id user { name } } }
query Deep { me { orders { user { orders { user { orders { user { orders { user { orders { user { name } } } } } } } } } } } }
query Paged($n: Int = 100) { orders(first: $n) { id user { orders(last: 100) { id } } } }`

const createOrders = (count: number, skipped = 0) =>
  `mutation { ${Array.from({ length: count }, (_, i) => `o${i}: createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] })${i < skipped ? ' @skip(if: true)' : ''} { id }`).join(' ')} }`
// Six of them through a fragment spread at the root: 20 + 6 = 26.
const THROUGH_FRAGMENT = `mutation { ${Array.from({ length: 20 }, (_, i) => `o${i}: createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }) { id }`).join(' ')} ...More }
fragment More on Mutation { ${Array.from({ length: 6 }, (_, i) => `m${i}: createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }) { id }`).join(' ')} }`

interface Operation {
  query: string
  operationName?: string
  variables?: Record<string, unknown>
}
type Verdict = { status: number; allowed: number } | { status: number; refused: string; cost?: number }

interface Case extends Operation {
  name: string
  verdict: Verdict
  /** What the executed operation answers, proving it is the one that was priced. */
  data?: (data: Record<string, unknown>) => boolean
}

const ordersOf = (length: number) => (data: Record<string, unknown>) => Array.isArray(data.orders) && data.orders.length === length
// X first: a refused document is not stored by the automatic persisted queries, so their flow
// sees it twice as unknown, once refused with the query, once registered through Cheap.
const QUERY_CASES: Case[] = [
  {
    name: 'X: 100 × (1 + ⌈0.1⌉ + (1 + 100 × (1 + ⌈0.1⌉ + (1 + 100 × (1 + ⌈0.1⌉)))))',
    query: DOCUMENT,
    operationName: 'X',
    verdict: { status: 422, refused: 'COST_LIMIT_EXCEEDED', cost: 2_030_300 },
  },
  {
    name: 'Cheap: a __typename, a scalar like any other',
    query: DOCUMENT,
    operationName: 'Cheap',
    verdict: { status: 200, allowed: 1 },
    data: (data) => data.__typename === 'Query',
  },
  {
    name: 'Small: 2 × (1 + ⌈0.1⌉ + (1 + ⌈0.1⌉))',
    query: DOCUMENT,
    operationName: 'Small',
    verdict: { status: 200, allowed: 8 },
    data: ordersOf(2),
  },
  { name: 'Deep: 11 levels', query: DOCUMENT, operationName: 'Deep', verdict: { status: 422, refused: 'DEPTH_LIMIT_EXCEEDED' } },
  {
    name: 'Paged with its default n = 100: 100 × (1 + ⌈0.1⌉ + (1 + 100 × 2))',
    query: DOCUMENT,
    operationName: 'Paged',
    verdict: { status: 422, refused: 'COST_LIMIT_EXCEEDED', cost: 20_300 },
  },
  {
    name: 'Paged with n = 2: 2 × (1 + ⌈0.1⌉ + (1 + 100 × 2))',
    query: DOCUMENT,
    operationName: 'Paged',
    variables: { n: 2 },
    verdict: { status: 200, allowed: 406 },
    data: ordersOf(2),
  },
]

const MUTATION_CASES: Array<Case & { created: number; mutations?: number }> = [
  {
    name: '30 createOrder',
    query: createOrders(30),
    created: 0,
    mutations: 30,
    verdict: { status: 422, refused: 'COST_LIMIT_EXCEEDED', cost: 30 * 2 },
  },
  {
    name: '26 createOrder, 6 of them through a fragment',
    query: THROUGH_FRAGMENT,
    created: 0,
    mutations: 26,
    verdict: { status: 422, refused: 'COST_LIMIT_EXCEEDED', cost: 26 * 2 },
  },
  { name: '30 createOrder, 5 of them skipped', query: createOrders(30, 5), created: 25, verdict: { status: 200, allowed: 25 * 2 } },
  { name: '25 createOrder', query: createOrders(25), created: 25, verdict: { status: 200, allowed: 25 * 2 } },
]

// The allow-list: every document above, by hash, in a manifest this test writes.
const manifestDir = await mkdtemp(join(tmpdir(), 'graphql-manifest-'))
t.teardown(() => rm(manifestDir, { recursive: true, force: true }))
const manifestPath = join(manifestDir, 'persisted-queries.json')
await writeFile(
  manifestPath,
  JSON.stringify(Object.fromEntries([...QUERY_CASES, ...MUTATION_CASES].map(({ query }) => [sha256(query), query]))),
)

const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(query) } })
const codeOf = (response: LightMyRequestResponse): string | undefined => response.json().errors?.[0]?.extensions?.code

function getUrl(fields: Record<string, unknown>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) params.set(name, typeof value === 'string' ? value : JSON.stringify(value))
  }
  return `/graphql?${params}`
}

interface Transport {
  name: string
  env?: Record<string, string>
  /** GET carries no mutation (405, tested in execution.test.ts). */
  mutations: boolean
  /** The responses of one operation: the last gives the verdict, any before it asked for the query. */
  send(app: FastifyInstance, operation: Operation, headers: Record<string, string>): Promise<LightMyRequestResponse[]>
}

function automaticPersisted(): Transport {
  const stored = new Set<string>()
  return {
    name: 'automatic persisted query (unknown hash, then with the query; the hash alone once stored)',
    mutations: true,
    async send(app, { query, operationName, variables }, headers) {
      const byHash = await gql(app, { operationName, variables, extensions: persisted(query) }, headers)
      if (stored.has(query)) return [byHash]
      const withQuery = await gql(app, { query, operationName, variables, extensions: persisted(query) }, headers)
      // Mercurius stores a document once it has executed, not when it was refused.
      if (withQuery.json().data) stored.add(query)
      return [byHash, withQuery]
    },
  }
}

const allowListEnv = { GRAPHQL_PERSISTED_ONLY: 'true', GRAPHQL_PERSISTED_MANIFEST: manifestPath }
const transports: Array<() => Transport> = [
  () => ({
    name: 'POST JSON',
    mutations: true,
    send: async (app, operation, headers) => [await app.inject({ method: 'POST', url: '/graphql', headers, payload: operation })],
  }),
  () => ({
    name: 'GET with operationName',
    mutations: false,
    send: async (app, { query, operationName, variables }, headers) => [
      await app.inject({ method: 'GET', url: getUrl({ query, operationName, variables }), headers }),
    ],
  }),
  automaticPersisted,
  () => ({
    name: 'allow-listed persisted query over POST',
    env: allowListEnv,
    mutations: true,
    send: async (app, { query, operationName, variables }, headers) => [
      await gql(app, { operationName, variables, extensions: persisted(query) }, headers),
    ],
  }),
  () => ({
    name: 'allow-listed persisted query over GET',
    env: allowListEnv,
    mutations: false,
    send: async (app, { query, operationName, variables }, headers) => [
      await app.inject({ method: 'GET', url: getUrl({ operationName, variables, extensions: persisted(query) }), headers }),
    ],
  }),
]

function verdictOf(response: LightMyRequestResponse): Verdict {
  const body = response.json()
  const code = body.errors?.[0]?.extensions?.code
  const cost = body.extensions?.cost?.requestedQueryCost
  if (code) return { status: response.statusCode, refused: code, ...(cost === undefined ? {} : { cost }) }
  return { status: response.statusCode, allowed: cost }
}

const orderCount = async (app: FastifyInstance) =>
  Number((await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)

for (const transport of transports) {
  const { name, env, mutations } = transport()
  t.test(`${name}: every operation gets the verdict of the operation it names, and a refused one runs no SQL`, async (t) => {
    let statements = 0
    // The outbox relay's polling would be counted too.
    const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false', ...env } })
    const { send } = transport()
    const verdictFor = async (operation: Case, headers: Record<string, string>) => {
      statements = 0
      const responses = await send(app, operation, headers)
      const response = responses.at(-1)!
      for (const asked of responses.slice(0, -1))
        t.equal(codeOf(asked), 'PERSISTED_QUERY_NOT_FOUND', `${operation.name}: an unknown hash asks for the query`)
      if ('refused' in operation.verdict) t.equal(statements, 0, `${operation.name}: no SQL ran`)
      t.same(verdictOf(response), operation.verdict, operation.name)
      return response
    }
    for (const operation of QUERY_CASES) {
      const response = await verdictFor(operation, admin)
      if (operation.data) t.ok(operation.data(response.json().data), `${operation.name}: the named operation is the one that ran`)
    }
    if (!mutations) return
    for (const operation of MUTATION_CASES) {
      const before = await orderCount(app)
      const response = await verdictFor(operation, grace)
      if (operation.mutations !== undefined)
        t.match(response.json().errors[0].extensions, { mutations: operation.mutations, maxMutations: 25 })
      t.equal(await orderCount(app), before + operation.created, `${operation.name}: ${operation.created} orders created`)
    }
  })
}

t.test("the issue's document over GET, naming its expensive second operation, is refused before anything runs", async (t) => {
  let statements = 0
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  statements = 0
  const response = await app.inject({
    method: 'GET',
    url: getUrl({ query: ISSUE_DOCUMENT, operationName: 'X' }),
    headers: { ...admin, accept: 'application/json' },
  })
  t.equal(response.statusCode, 200, 'application/json: a refused request is 200 with errors')
  t.equal(codeOf(response), 'COST_LIMIT_EXCEEDED')
  t.same(response.json().errors[0].extensions, { code: 'COST_LIMIT_EXCEEDED', cost: 2_030_300, maxCost: 5000 })
  t.equal(statements, 0, 'no SQL ran')
})

t.test("a document with several operations and no operationName gets graphql's own error, not a guess", async (t) => {
  let statements = 0
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  statements = 0
  const response = await gql(app, { query: ISSUE_DOCUMENT }, admin)
  t.equal(response.statusCode, 422)
  t.same(response.json().errors, [
    { message: 'Must provide operation name if query contains multiple operations.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
  ])
  const unknown = await gql(app, { query: ISSUE_DOCUMENT, operationName: 'Nope' }, admin)
  t.equal(unknown.statusCode, 422)
  t.equal(unknown.json().errors[0].message, 'Unknown operation named "Nope".')
  t.equal(statements, 0, 'no SQL ran')
})

t.test('the compiled-query cache never runs another operation of the document than the one named', async (t) => {
  // GRAPHQL_JIT=1: Mercurius compiles a document on its second run and keys the compiled query by
  // the document's text alone.
  const app = await build(t, { env: { EVENTS_RELAY: 'false', GRAPHQL_JIT: '1' } })
  const query = 'query A($n: Int = 1) { orders(first: $n) { id user { orders(last: $n) { id } } } } query B { __typename }'
  for (let run = 0; run < 3; run++) {
    const a = await gql(app, { query, operationName: 'A' }, admin)
    t.equal(a.json().data.orders.length, 1)
    t.equal(a.json().extensions.cost.requestedQueryCost, 1 * (1 + 1 + (1 + 1 * 2)), 'A priced with its default n = 1')
  }
  const b = await gql(app, { query, operationName: 'B', variables: { n: 100 } }, admin)
  t.same(b.json().data, { __typename: 'Query' }, 'B is what ran, not the compiled A with n = 100')
  t.equal(b.json().extensions.cost.requestedQueryCost, 1)
})

t.test('fragments spread into fragments are priced once each: a short document cannot make pricing itself run for ever', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  // F1 spreads F2 twice, F2 spreads F3 twice, …: 2^59 paths, each walked, before fragments were
  // memoised (a 2 KB document then pinned the event loop for good).
  const fragments = Array.from({ length: 59 }, (_, i) => `fragment F${i + 1} on Order { ...F${i + 2} ...F${i + 2} }`)
  const query = `query { orders(first: 1) { ...F1 } } ${fragments.join(' ')} fragment F60 on Order { id user { name } }`
  const response = await gql(app, query, admin)
  t.equal(response.statusCode, 422)
  t.same(response.json().errors[0].extensions, { code: 'COST_LIMIT_EXCEEDED', cost: Number.MAX_SAFE_INTEGER, maxCost: 5000 })
})
