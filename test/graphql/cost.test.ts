/** Unit tests of the cost model (decisions §9) on small schemas and documents: no app, no database. */
import t from 'tap'
import { buildSchema, parse } from 'graphql'
import { DEFAULT_LIST_SIZE, operationCost } from '../../src/graphql/cost.ts'
import { executingOperation } from '../../src/graphql/executing-operation.ts'
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

t.test('scalars cost nothing, an object field 1 plus its selection', async (t) => {
  t.equal(cost('{ order(id: 1) { id total } }'), 1)
  t.equal(cost('{ order(id: 1) { id user { name } } }'), 2)
})

t.test('a list multiplies by first/last, or by the default page size without one', async (t) => {
  t.equal(cost('{ orders(first: 10) { id items { sku product { name } } } }'), 410, 'the example of schema.graphql')
  t.equal(cost('{ orders { id } }'), DEFAULT_PAGE_SIZE)
  t.equal(cost('query ($n: Int) { orders(first: $n) { id } }', { n: 3 }), 3, 'from a variable')
  t.equal(cost('{ order(id: 1) { user { orders(last: 4) { id } } } }'), 1 + 1 + 4)
})

t.test('a connection costs what its list costs', async (t) => {
  t.equal(
    cost('{ ordersConnection(first: 10) { edges { cursor node { id items { sku product { name } } } } pageInfo { hasNextPage } } }'),
    410,
  )
  t.equal(cost('{ ordersConnection { edges { node { id } } } }'), DEFAULT_PAGE_SIZE, 'the declared default first')
})

t.test('skipped selections, introspection and repeated fragments are priced as executed', async (t) => {
  t.equal(cost('query ($s: Boolean!) { orders(first: 5) { id user @skip(if: $s) { name } } }', { s: true }), 5)
  t.equal(cost('{ __schema { types { name } } __typename }'), 0)
  t.equal(cost('{ a: orders(first: 2) { ...O } b: orders(first: 3) { ...O } } fragment O on Order { user { name } }'), 2 * 2 + 3 * 2)
})
