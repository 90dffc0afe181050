// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/** Unit tests of the cost model (decisions §9, §13) on small schemas and documents: no app, no database. */
import t from 'tap'
import { buildSchema, getIntrospectionQuery, parse } from 'graphql'
import { DEFAULT_LIST_SIZE, operationCost, priceOperation } from '../../src/graphql/limits/cost.ts'
import { executingOperation } from '../../src/graphql/limits/executing-operation.ts'
import { DEFAULT_PAGE_SIZE } from '../../src/pagination/page-size.ts'

const schema = buildSchema(`
  type Query {
    orders(first: Int, after: String): [Order!]!
    ordersConnection(first: Int = 20): OrderConnection!
    order(id: ID!): Order
  }
  type Order { id: ID! total: Int! user: User! items: [Item!]! }
  type Item { sku: String! product: Product }
  type Product { name: String! }
  type User { name: String! orders(last: Int): [Order!]! }
  type OrderConnection { edges: [OrderEdge!]! pageInfo: PageInfo! }
  type OrderEdge { cursor: String! node: Order! }
  type PageInfo { hasNextPage: Boolean! }
`)

function cost(document: string, variables: Record<string, unknown> = {}): number {
  const operation = executingOperation(schema, parse(document), undefined, variables)
  if (!('operation' in operation)) throw new Error(`the document does not execute: ${operation.map(String).join('; ')}`)
  return operationCost(schema, operation)
}

t.test('the default list size is the default page size', async (t) => {
  t.equal(DEFAULT_LIST_SIZE, DEFAULT_PAGE_SIZE)
})

const aliases = (count: number, field: string) => Array.from({ length: count }, (_, i) => `a${i + 1}: ${field}`).join(' ')

t.test('a scalar costs a tenth of a point, the scalars of a selection set rounded up; an object field 1 plus its selection', async (t) => {
  t.equal(cost('{ order(id: 1) { id total } }'), 1 + 1, '⌈0.2⌉')
  t.equal(cost('{ order(id: 1) { id user { name } } }'), 1 + 1 + (1 + 1))
  t.equal(cost(`{ order(id: 1) { ${aliases(10, 'id')} } }`), 1 + 1, 'ten scalars are one point')
  t.equal(cost(`{ order(id: 1) { ${aliases(11, 'id')} } }`), 1 + 2, 'eleven are two')
  t.equal(cost('{ order(id: 1) { __typename } }'), 1 + 1, '__typename is a scalar like any other')
})

t.test('every selected field counts, aliases and repetitions included (decisions §13)', async (t) => {
  t.equal(cost(`{ orders(first: 48) { ${aliases(7000, 'id')} } }`), 48 * (1 + 700), "the issue's 69 KB document: 33,648 points")
  t.equal(
    cost(`{ order(id: 1) { ${Array.from({ length: 20 }, () => 'id').join(' ')} } }`),
    1 + 2,
    'a field selected 20 times counts 20 times',
  )
  t.equal(cost(`{ ${aliases(30, 'order(id: 1) { id }')} }`), 30 * (1 + 1), 'an aliased object field counts each time')
  t.equal(
    cost('{ order(id: 1) { id ...F ... on Order { total } } } fragment F on Order { total }'),
    1 + 1,
    "fragments' scalars are rounded with the selection set they are spread into: ⌈0.3⌉",
  )
})

t.test('a list multiplies by first/last, or by the default page size without one', async (t) => {
  t.equal(
    cost('{ orders(first: 10) { id items { sku product { name } } } }'),
    10 * (1 + 1 + 20 * (1 + 1 + (1 + 1))),
    'the example of docs/graphql.md: 820',
  )
  t.equal(cost('{ orders { id } }'), DEFAULT_PAGE_SIZE * 2)
  t.equal(cost('query ($n: Int) { orders(first: $n) { id } }', { n: 3 }), 3 * 2, 'from a variable')
  t.equal(cost('{ order(id: 1) { user { orders(last: 4) { id } } } }'), 1 + (1 + 4 * 2))
  t.equal(cost('{ orders(first: 4) { user { orders(last: 20) { id total } } } }'), 4 * (1 + (1 + 20 * 2)), 'nested under two lists')
})

t.test('a connection costs what its list costs, plus the scalars selected on its edges and pageInfo', async (t) => {
  t.equal(
    cost('{ ordersConnection(first: 10) { edges { cursor node { id items { sku product { name } } } } pageInfo { hasNextPage } } }'),
    10 * (1 + 82) + 1,
    "the list's 820, a cursor per edge, pageInfo's scalars",
  )
  t.equal(cost('{ ordersConnection { edges { node { id } } } }'), DEFAULT_PAGE_SIZE * 2, 'the declared default first')
  t.equal(cost(`{ ordersConnection(first: 10) { edges { ${aliases(100, 'cursor')} } } }`), 10 * 10, 'aliased cursors count per edge')
  t.equal(cost(`{ ordersConnection(first: 10) { pageInfo { ${aliases(100, 'hasNextPage')} } } }`), 10, 'aliased pageInfo fields count')
})

t.test('skipped selections cost nothing; repeated fragments are priced as executed', async (t) => {
  t.equal(cost('query ($s: Boolean!) { orders(first: 5) { id user @skip(if: $s) { name } } }', { s: true }), 5 * 2)
  t.equal(
    cost('{ a: orders(first: 2) { ...O } b: orders(first: 3) { ...O } } fragment O on Order { user { name } }'),
    2 * (1 + 2) + 3 * (1 + 2),
  )
})

t.test('introspection is free as tools send it; an alias inside it costs like any field', async (t) => {
  t.equal(cost(getIntrospectionQuery()), 0, 'the introspection query of GraphiQL and code generators')
  t.equal(cost('{ __schema { types { name fields { name type { name } } } } __type(name: "Order") { name } }'), 0)
  t.equal(cost('{ __schema { a: types { name } b: types { name } } }'), 2 * 20 * (1 + 1), 'each aliased list of types')
  t.equal(cost('{ __schema { types { a: name b: name } } }'), 20 * 1, 'aliases under a free list count once per type')
  t.equal(cost(`{ ${aliases(100, '__type(name: "Order") { name }')} }`), 100 * (1 + 1))
})

t.test('the fields an operation selects, fragments expanded and lists not multiplied, are what graphql-jit would compile', async (t) => {
  const fields = (document: string) => {
    const operation = executingOperation(schema, parse(document), undefined, {})
    if (!('operation' in operation)) throw new Error('the document does not execute')
    return priceOperation(schema, operation).fields
  }
  t.equal(fields('{ orders(first: 100) { id items { sku } } }'), 4)
  t.equal(fields('{ a: orders(first: 2) { ...O } b: orders(first: 3) { ...O } } fragment O on Order { id total }'), 2 + 2 * 2)
})
