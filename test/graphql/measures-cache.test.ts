// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The limits' measures are computed once per document and values of the variables they read
 * (measures-cache.ts): unit tests on the real cost model, counting how often it runs. No app, no
 * database. (limits.test.ts and cost.test.ts prove the verdicts through the app, with the cache.)
 */
import t from 'tap'
import { buildSchema, parse, type DocumentNode, type GraphQLSchema } from 'graphql'
import { priceOperation } from '../../src/graphql/limits/cost.ts'
import { executingOperation, type ExecutingOperation } from '../../src/graphql/limits/executing-operation.ts'
import { operationDepth } from '../../src/graphql/limits/limits.ts'
import { createMeasuresCache, MAX_SHAPES_PER_OPERATION } from '../../src/graphql/limits/measures-cache.ts'

const schema = buildSchema(`
  type Query {
    orders(first: Int, status: String): [Order!]!
    user(id: ID!): User
  }
  type Order { id: ID! user: User! items: [Item!]! }
  type Item { sku: String! }
  type User { name: String! orders(last: Int): [Order!]! }
`)

function counted() {
  let runs = 0
  const measure = (s: GraphQLSchema, operation: ExecutingOperation) => {
    runs++
    return { ...priceOperation(s, operation), depth: operationDepth(operation) }
  }
  return { cache: createMeasuresCache(measure), runs: () => runs }
}

function executing(document: DocumentNode, variables: Record<string, unknown> = {}): ExecutingOperation {
  const operation = executingOperation(schema, document, undefined, variables)
  if (!('operation' in operation)) throw new Error(operation.map(String).join('; '))
  return operation
}

t.test('one document without variables is measured once, whatever the number of requests', async (t) => {
  const { cache, runs } = counted()
  const document = parse('{ orders(first: 50) { id user { name } items { sku } } }')
  const first = cache(schema, executing(document))
  for (let i = 0; i < 10; i++) t.same(cache(schema, executing(document)), first)
  t.equal(runs(), 1)
  t.equal(first.cost, 50 * (1 + 1 + (1 + 1) + 20 * (1 + 1)), 'the id, the user, 20 items by default')
})

t.test('a variable the cost reads keys the measures by its value', async (t) => {
  const { cache, runs } = counted()
  const document = parse('query ($n: Int) { orders(first: $n) { id } }')
  t.equal(cache(schema, executing(document, { n: 10 })).cost, 10 * 2)
  t.equal(cache(schema, executing(document, { n: 40 })).cost, 40 * 2)
  t.equal(cache(schema, executing(document, { n: 10 })).cost, 10 * 2, 'the first value again: its own measures')
  t.equal(cache(schema, executing(document, {})).cost, 20 * 2, 'left out: the default list size')
  t.equal(runs(), 3)
})

t.test('a variable the measures do not read (an id) does not key them', async (t) => {
  const { cache, runs } = counted()
  const document = parse('query ($id: ID!) { user(id: $id) { name orders(last: 5) { id } } }')
  const costs = [1, 2, 3, 4].map((id) => cache(schema, executing(document, { id: String(id) })).cost)
  t.same(costs, [costs[0], costs[0], costs[0], costs[0]])
  t.equal(runs(), 1)
})

t.test('a list size hidden by @skip is read once it is not skipped, and keys the measures from then on', async (t) => {
  const { cache, runs } = counted()
  const document = parse('query ($s: Boolean!, $n: Int) { orders(first: 2) { id } more: orders(first: $n) @skip(if: $s) { id } }')
  t.equal(cache(schema, executing(document, { s: true, n: 1000 })).cost, 2 * 2)
  t.equal(cache(schema, executing(document, { s: false, n: 1000 })).cost, 2 * 2 + 1000 * 2)
  t.equal(cache(schema, executing(document, { s: false, n: 3 })).cost, 2 * 2 + 3 * 2, 'n now keys the measures')
  t.equal(cache(schema, executing(document, { s: false, n: 1000 })).cost, 2 * 2 + 1000 * 2)
  t.equal(runs(), 3)
})

t.test('each parse of a text is its own document; the values kept per operation are bounded', async (t) => {
  const { cache, runs } = counted()
  const text = 'query ($n: Int) { orders(first: $n) { id } }'
  cache(schema, executing(parse(text), { n: 1 }))
  cache(schema, executing(parse(text), { n: 1 }))
  t.equal(runs(), 2, 'nothing outlives the parsed document it hangs on')
  const document = parse(text)
  for (let n = 1; n <= MAX_SHAPES_PER_OPERATION + 1; n++) cache(schema, executing(document, { n }))
  const before = runs()
  cache(schema, executing(document, { n: MAX_SHAPES_PER_OPERATION + 1 }))
  t.equal(runs(), before, 'the most recent values are kept')
  cache(schema, executing(document, { n: 1 }))
  t.equal(runs(), before + 1, 'the least recently used were let go')
})
