/**
 * No N+1: the number of SQL statements a query issues does not depend on how many parents it
 * returns. Statements are counted through Kysely's log hook, not by reading the code.
 */
import t from 'tap'
import { bearer, build, gql } from '../helper.ts'
import { insertLoadUsers } from '../load-users.ts'

const admin = bearer(1, 'admin')

async function setup(t: Parameters<typeof build>[0]) {
  let statements = 0
  // users(first: 50) { id orders(last: 10) { id items { sku } } } costs 21,100 points, over the
  // default limit and bucket: this test is about statements, so both are raised.
  const app = await build(t, {
    onQuery: () => void statements++,
    env: { GRAPHQL_MAX_COST: '100000', GRAPHQL_COST_BUCKET: '1000000', EVENTS_RELAY: 'false' },
  })
  // 60 users, each with two orders, so that every page size below is full.
  await insertLoadUsers(app.db)
  const run = async (query: string) => {
    statements = 0
    const response = await gql(app, query, admin)
    const body = response.json()
    if (body.errors) throw new Error(JSON.stringify(body.errors))
    return { body, statements }
  }
  return run
}

t.test('orders(first: N) { user { company } items } issues the same statements for 1, 10 and 50 orders', async (t) => {
  const run = await setup(t)
  const counts: number[] = []
  for (const first of [1, 10, 50]) {
    const { body, statements } = await run(`{ orders(first: ${first}) { id user { name company { name } } items { sku qty } } }`)
    t.equal(body.data.orders.length, first)
    t.ok(
      body.data.orders.every((order: { user: { name: string } }) => order.user.name),
      'every order has its user',
    )
    counts.push(statements)
  }
  t.equal(new Set(counts).size, 1, `statements per page size: ${counts.join(', ')}`)
  t.ok(counts[0]! <= 6, `a small, fixed number of statements (${counts[0]})`)
})

t.test('users { orders(last: 10) { items } } issues the same statements for 1, 10 and 50 users', async (t) => {
  const run = await setup(t)
  const counts: number[] = []
  for (const first of [1, 10, 50]) {
    const { body, statements } = await run(`{ users(first: ${first}) { id orders(last: 10) { id items { sku } } } }`)
    t.equal(body.data.users.length, first)
    counts.push(statements)
  }
  t.equal(new Set(counts).size, 1, `statements per page size: ${counts.join(', ')}`)
})

t.test('User.orders(last: N) returns the N most recent orders, oldest of them first', async (t) => {
  const app = await build(t)
  const response = await gql(app, '{ user(id: 2) { orders(last: 2) { databaseId createdAt } } }', bearer(2, 'orders:read'))
  const orders = response.json().data.user.orders
  t.same(
    orders.map((order: { databaseId: number }) => order.databaseId),
    [2, 3],
    'the two most recent of orders 1, 2, 3, oldest first',
  )
})
