/**
 * GraphQL resolved by plan: a page of orders reads its owners and their companies in one
 * second statement (decisions §13), a user reads its company and its recent orders in its own, and what a plan read is what
 * the loaders give for the same document (the same JSON, for the owner and an admin, with and
 * without the optional fields). Statements are counted through Kysely's log hook.
 */
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { bearer, build, gql } from '../helper.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

const admin = bearer(1, 'admin')
const grace = bearer(2, 'orders:read')

type Body = { data?: Record<string, unknown> | null; errors?: Array<{ message: string; path?: unknown[]; extensions: { code: string } }> }

async function setup(t: Test, env: Record<string, string> = {}) {
  const statements: string[] = []
  const app = await build(t, { onQuery: (event) => void statements.push(event.query.sql), env: { EVENTS_RELAY: 'false', ...env } })
  // Katherine Johnson (4) has no company: give her an order. Timestamps with milliseconds at
  // both ends of their range, in another session time zone, so that both paths show them.
  await sql`update users set created_at = '2026-02-01 11:00:00.123+01' where id = 4`.execute(app.db)
  await sql`
    with o as (
      insert into orders (user_id, status, total, created_at, updated_at)
      values (4, 'pending', 2400, '2026-02-02 11:30:00.999+00', '2026-02-03 07:00:00.001-05') returning id
    )
    insert into order_items (order_id, position, sku, qty, unit_price)
    select o.id, p, sku, 1, 1200 from o, (values (0, 'CB-404'), (1, 'KB-101')) as v(p, sku)`.execute(app.db)
  const run = async (headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) => {
    statements.length = 0
    const response = await gql(app, { query, variables }, headers)
    t.equal(response.statusCode, 200, 'answered')
    return { body: response.json() as Body, statements: [...statements] }
  }
  return { app, run }
}

/** 60 more users (a third without a company), each with two orders of one item. */
async function addLoad(app: FastifyInstance) {
  await sql`
    with new_users as (
      insert into users (name, company_id) select 'Plan user ' || n, nullif(n % 3, 0) from generate_series(1, 60) as n returning id
    ), new_orders as (
      insert into orders (user_id, status, total, created_at, updated_at)
      select id, 'paid', 1200, now() - (id || ' minutes')::interval - (k || ' seconds')::interval, now()
      from new_users, generate_series(1, 2) as k returning id
    )
    insert into order_items (order_id, position, sku, qty, unit_price) select id, 0, 'CB-404', 1, 1200 from new_orders`.execute(app.db)
}

t.test('the bench shapes: orders with items, then users → company, apart; user → company, orders → items in one', async (t) => {
  // Points are not what this test is about: the shapes below take more than the default bucket.
  const { app, run } = await setup(t, { GRAPHQL_MAX_COST: '100000', GRAPHQL_COST_BUCKET: '10000000' })
  await addLoad(app)
  for (const first of [1, 10, 50]) {
    const { body, statements } = await run(admin, `{ orders(first: ${first}) { id user { name company { name } } items { sku } } }`)
    t.notOk(body.errors)
    const orders = body.data!.orders as Array<{ user: { name: string; company: { name: string } | null }; items: unknown[] }>
    t.equal(orders.length, first)
    t.ok(
      orders.every((order) => order.user.name && order.items.length === 1),
      'every order has its user and items',
    )
    // The page, then its owners with their companies apart (decisions §13: cheaper than the join).
    t.equal(statements.length, 2, `orders(first: ${first}) { user { company } items }: the page, then its owners`)
  }
  for (const first of [1, 10, 50]) {
    const { body, statements } = await run(
      admin,
      `{ ordersConnection(first: ${first}) { edges { cursor node { id user { name company { name } } items { sku } } } pageInfo { hasNextPage } } }`,
    )
    t.notOk(body.errors)
    t.equal(statements.length, 2, `ordersConnection(first: ${first}) with user, company and items: the page, then its owners`)
  }

  const scenario = '{ user(id: "2") { name company { name } orders(last: 10) { databaseId total items { sku qty } } } }'
  const owned = await run(grace, scenario)
  t.notOk(owned.body.errors)
  t.same(owned.body.data, {
    user: {
      name: 'Grace Hopper',
      company: { name: 'Acme Corporation' },
      orders: [
        { databaseId: 1, total: 27900, items: [{ sku: 'MN-303', qty: 1 }] },
        { databaseId: 2, total: 6900, items: [{ sku: 'WC-606', qty: 1 }] },
        {
          databaseId: 3,
          total: 11300,
          items: [
            { sku: 'KB-101', qty: 1 },
            { sku: 'CB-404', qty: 2 },
          ],
        },
      ],
    },
  })
  t.equal(owned.statements.length, 1, 'user → company, orders → items: the user with its company and its orders with their items')

  for (const first of [1, 10, 50]) {
    const { body, statements } = await run(
      admin,
      `{ users(first: ${first}) { id company { name } orders(last: 10) { id user { name company { name } } items { sku } } } }`,
    )
    t.notOk(body.errors)
    t.equal(statements.length, 2, `users(first: ${first}) { company orders { user { company } items } }: two statements`)
  }
  const me = await run(grace, '{ me { name company { name } } }')
  t.same(me.body.data, { me: { name: 'Grace Hopper', company: { name: 'Acme Corporation' } } })
  t.equal(me.statements.length, 1, 'me { company }: one statement')
})

t.test(
  'the look-ahead honours fragments, aliases and @skip/@include: a relation is read when, and only when, it is selected',
  async (t) => {
    const { run } = await setup(t)
    const joinsCompanies = (statements: string[]) => statements.some((text) => /\bcompanies\b/.test(text))
    const joinsUsers = (statements: string[]) => statements.some((text) => /\busers\b/.test(text))

    const plain = await run(admin, '{ orders(first: 3) { id } }')
    t.equal(plain.statements.length, 1)
    t.notOk(joinsUsers(plain.statements), 'no owner selected: no users read')

    const query = `query($company: Boolean!, $owner: Boolean!) {
    orders(first: 3, userId: 2) { id ...Owner @include(if: $owner) }
  }
  fragment Owner on Order { a: user { name } b: user { ... on User { company @include(if: $company) { name } } } }`
    for (const [owner, company] of [
      [false, false],
      [true, false],
      [true, true],
    ] as const) {
      const { body, statements } = await run(admin, query, { owner, company })
      t.notOk(body.errors)
      t.equal(statements.length, owner ? 2 : 1, `owner ${owner}, company ${company}: the page${owner ? ', then its owners' : ''}`)
      t.equal(joinsUsers(statements), owner, `users read: ${owner}`)
      t.equal(joinsCompanies(statements), company, `companies read: ${company}`)
      const first = (body.data!.orders as Array<Record<string, unknown>>)[0]!
      if (owner) {
        t.same(first.a, { name: 'Grace Hopper' }, 'the alias without the company')
        t.same(first.b, company ? { company: { name: 'Acme Corporation' } } : {}, 'the alias with it, when included')
      } else {
        t.same(Object.keys(first), ['id'])
      }
    }

    const skipped = await run(grace, 'query($skip: Boolean!) { me { name company @skip(if: $skip) { name } } }', { skip: true })
    t.same(skipped.body.data, { me: { name: 'Grace Hopper' } })
    t.notOk(joinsCompanies(skipped.statements), 'a skipped company is not read')
  },
)

t.test('a page of orders reads only the fields selected: no column, item field or owner the selection does not name', async (t) => {
  const { run } = await setup(t)
  const pageOf = (statements: string[]) => statements.find((text) => /\bfrom orders\b/.test(text)) ?? ''

  const lean = await run(admin, '{ orders(first: 3) { id status } }')
  t.notOk(lean.body.errors)
  t.equal(lean.statements.length, 1)
  t.match(pageOf(lean.statements), /orders\.status/, 'the status is read')
  for (const column of ['orders.total', 'order_items', 'orders.updated_at', 'users']) {
    t.notOk(pageOf(lean.statements).includes(column), `${column} is not read`)
  }

  const skus = await run(grace, '{ orders(first: 3) { total items { sku } } }')
  t.notOk(skus.body.errors)
  const page = pageOf(skus.statements)
  t.match(page, /orders\.total/)
  t.match(page, /"i"\."sku"/, 'the item sku is read')
  t.notOk(/\bqty\b|unit_price/.test(page), 'no item field that is not selected')
  const orders = skus.body.data!.orders as Array<{ total: number; items: Array<Record<string, unknown>> }>
  t.ok(orders.length > 0 && orders.every((order) => order.total > 0 && order.items.every((item) => Object.keys(item).join() === 'sku')))

  // Item.product needs the sku; Item.id and unitPrice what they are made of.
  const lines = await run(grace, '{ orders(first: 1) { items { id unitPrice product { name } } } }')
  t.notOk(lines.body.errors)
  t.match(pageOf(lines.statements), /"i"\."sku".*"i"\."unit_price"/s)
  t.notOk(/\bqty\b/.test(pageOf(lines.statements)))
  const line = (lines.body.data!.orders as Array<{ items: Array<{ id: string; unitPrice: number; product: { name: string } }> }>)[0]!
    .items[0]!
  t.ok(line.id && line.unitPrice > 0 && line.product.name, 'the line answers its id, price and product')

  // An item of no field read is still a line of its order: its id is the order's and its position.
  const ids = await run(grace, '{ orders(first: 3) { databaseId items { id } } }')
  t.notOk(ids.body.errors)
  t.notOk(/"i"\."(sku|qty|unit_price)"/.test(pageOf(ids.statements)), 'no item field read')
  const withIds = ids.body.data!.orders as Array<{ databaseId: number; items: Array<{ id: string }> }>
  t.same(
    withIds.find((order) => order.databaseId === 3)?.items.map((item) => item.id),
    [toGlobalId('Item', { orderId: 3, position: 0 }), toGlobalId('Item', { orderId: 3, position: 1 })],
  )
})

/** The selection both paths answer: every field of an order, its items and its owner. */
const FRAGMENTS = `
  fragment U on User { id databaseId name createdAt company @include(if: $company) { id name } }
  fragment O on Order { id databaseId status total createdAt updatedAt items { sku qty unitPrice } user @include(if: $owner) { ...U } }`

t.test(
  'what a plan read is what the loaders give: the same JSON for the owner and an admin, with and without the optional fields',
  async (t) => {
    const { run } = await setup(t, { GRAPHQL_MAX_COST: '100000', GRAPHQL_COST_BUCKET: '10000000' })
    const everyOrder = await run(admin, '{ orders(first: 100) { databaseId user { databaseId } } }')
    const orderOf = new Map(
      (everyOrder.body.data!.orders as Array<{ databaseId: number; user: { databaseId: number } }>).map((order) => [
        order.user.databaseId,
        order.databaseId,
      ]),
    )
    for (const [who, headers, users] of [
      ['the owner', grace, [2]],
      ['an admin', admin, [1, 2, 3, 4]],
    ] as const) {
      for (const [owner, company] of [
        [true, true],
        [true, false],
        [false, false],
      ] as const) {
        const variables = { owner, company }
        const label = `${who}, owner ${owner}, company ${company}`
        // Planned: the lists read the owners (and their companies) in their own statements.
        const planned = await run(
          headers,
          `query($owner: Boolean!, $company: Boolean!) {
          orders(first: 20) { ...O }
          ordersConnection(first: 20) { edges { node { ...O } } }
          ${users.map((id) => `u${id}: user(id: ${id}) { ...U orders(last: 10) { ...O } }`).join(' ')}
        } ${FRAGMENTS}`,
          variables,
        )
        t.notOk(planned.body.errors, `${label}: ${JSON.stringify(planned.body.errors)}`)
        const data = planned.body.data!
        const orders = data.orders as Array<{ databaseId: number }>
        t.ok(orders.length >= 3, `${label}: several orders`)
        // Loaded: the same orders one by one (Query.order plans nothing), owners through Order.user's
        // loader and companies through User.company's.
        const loaded = await run(
          headers,
          `query($owner: Boolean!, $company: Boolean!) {
          ${orders.map((order) => `o${order.databaseId}: order(id: ${order.databaseId}) { ...O }`).join(' ')}
          ${users.map((id) => `u${id}: order(id: ${orderOf.get(id)}) { user { ...U } }`).join(' ')}
        } ${FRAGMENTS}`,
          variables,
        )
        t.notOk(loaded.body.errors, label)
        const byId = loaded.body.data!
        t.same(
          orders,
          orders.map((order) => byId[`o${order.databaseId}`]),
          `${label}: orders`,
        )
        t.same(
          (data.ordersConnection as { edges: Array<{ node: unknown }> }).edges.map((edge) => edge.node),
          orders,
          `${label}: ordersConnection`,
        )
        for (const id of users) {
          const { orders: recent, ...user } = data[`u${id}`] as { orders: Array<{ databaseId: number }> }
          t.same(user, (byId[`u${id}`] as { user: unknown }).user, `${label}: user ${id}`)
          t.same(
            recent,
            recent.map((order) => byId[`o${order.databaseId}`]),
            `${label}: user ${id}'s orders`,
          )
        }
      }
    }
  },
)

t.test('timestamps from a plan are written as the API writes them: UTC, milliseconds, Z', async (t) => {
  const { run } = await setup(t)
  const { body } = await run(
    admin,
    '{ user(id: 4) { createdAt company { id } orders(last: 1) { createdAt updatedAt user { createdAt } } } }',
  )
  t.same(body.data, {
    user: {
      createdAt: '2026-02-01T10:00:00.123Z',
      company: null,
      orders: [
        { createdAt: '2026-02-02T11:30:00.999Z', updatedAt: '2026-02-03T12:00:00.001Z', user: { createdAt: '2026-02-01T10:00:00.123Z' } },
      ],
    },
  })
})

t.test('a plan authorizes as the services do: the owner reads only its own, a missing scope fails the field alone', async (t) => {
  const { run } = await setup(t)
  const own = await run(
    grace,
    '{ orders(first: 100) { user { id company { name } } } ordersConnection(first: 100) { edges { node { user { id } } } } }',
  )
  t.notOk(own.body.errors)
  const owners = [
    ...(own.body.data!.orders as Array<{ user: { id: string } }>).map((order) => order.user.id),
    ...(own.body.data!.ordersConnection as { edges: Array<{ node: { user: { id: string } } }> }).edges.map((edge) => edge.node.user.id),
  ]
  t.same([...new Set(owners)], [toGlobalId('User', 2)], "only grace's orders, each with grace as its user")

  const other = await run(grace, '{ user(id: 3) { name company { name } } }')
  t.equal(other.body.errors?.[0]?.extensions.code, 'FORBIDDEN', "another user's record is FORBIDDEN")
  t.same(other.body.data, { user: null })
  t.equal(other.statements.length, 0, 'refused before any read')

  const filtered = await run(grace, '{ orders(userId: 3) { id user { name } } }')
  t.equal(filtered.body.errors?.[0]?.extensions.code, 'FORBIDDEN', 'only an admin filters by user')

  const noScope = await run(
    bearer(2, 'articles:write'),
    '{ mine: user(id: 2) { name company { name } } withOrders: user(id: 2) { name orders(last: 2) { id user { name } } } }',
  )
  t.same(
    noScope.body.data,
    { mine: { name: 'Grace Hopper', company: { name: 'Acme Corporation' } }, withOrders: null },
    'the rest of data stays',
  )
  t.equal(noScope.body.errors?.[0]?.extensions.code, 'FORBIDDEN', 'orders without orders:read')
  t.same(noScope.body.errors?.[0]?.path, ['withOrders', 'orders'])
})

t.test('user → orders in one statement answers what the loader answers, and falls back to it where one statement cannot', async (t) => {
  const { run } = await setup(t)
  const selection = 'name orders(last: 2) { databaseId total items { sku } }'
  const planned = await run(grace, `{ user(id: "2") { ${selection} } }`)
  t.equal(planned.statements.length, 1, 'one orders field: one statement')
  // Two aliases of orders: the user's statement, then User.orders' own, one per `last`.
  const loaded = await run(grace, `{ user(id: "2") { ${selection} more: orders(last: 3) { databaseId } } }`)
  t.equal(loaded.statements.length, 3, 'two aliases: the loader')
  t.same(loaded.body.data?.user && { ...(loaded.body.data.user as object), more: undefined }, {
    ...(planned.body.data!.user as object),
    more: undefined,
  })
  t.same(
    (loaded.body.data!.user as { more: Array<{ databaseId: number }> }).more.map((order) => order.databaseId),
    [1, 2, 3],
    'the other alias its own last',
  )
  const viaVariable = await run(grace, 'query ($n: Int) { me { orders(last: $n) { databaseId } } }', { n: 1 })
  t.same(viaVariable.body.data, { me: { orders: [{ databaseId: 3 }] } }, 'me, with last from a variable')
  t.equal(viaVariable.statements.length, 1)

  const refused = await run(grace, '{ user(id: "2") { name orders(last: 0) { databaseId } } }')
  t.equal(refused.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', 'an invalid last is refused where it always was')
  t.same(refused.body.errors?.[0]?.path, ['user', 'orders'])

  const noScope = await run(bearer(2, 'articles:write'), '{ user(id: "2") { name orders(last: 2) { databaseId } } }')
  t.same(noScope.body.data, { user: null }, 'a user without orders:read: the non-null orders field nulls its user')
  t.equal(noScope.body.errors?.[0]?.extensions.code, 'FORBIDDEN')
  t.same(noScope.body.errors?.[0]?.path, ['user', 'orders'])
})
