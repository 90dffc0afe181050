/**
 * Relay-style connections: every list that takes a cursor has a connection beside it
 * with the same records, rules and cost; its cursors live on the edges, so a normalized cache
 * never mixes two lists' positions. Paging is keyset paging in the service (no record skipped or
 * repeated), nested connections are batched (no N+1), and the limits price a connection like the
 * list it mirrors.
 */
import t from 'tap'
import { sql } from 'kysely'
import { bearer, build, gql } from '../helper.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

const admin = bearer(1, 'admin')
const grace = bearer(2, 'orders:read orders:write articles:write')

type Edge = { cursor: string; node: Record<string, unknown> }
type ConnectionPage = {
  edges: Edge[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
}

async function graphql(
  app: Awaited<ReturnType<typeof build>>,
  headers: Record<string, string>,
  query: string,
  variables?: Record<string, unknown>,
) {
  const response = await gql(app, { query, ...(variables ? { variables } : {}) }, headers)
  return response.json() as {
    data?: Record<string, unknown>
    errors?: Array<{ message: string; extensions?: Record<string, unknown> }>
    extensions?: { cost?: { requestedQueryCost: number } }
  }
}

/** Pages through a root connection two at a time; returns every node id in order and the pages seen. */
async function pageThrough(
  app: Awaited<ReturnType<typeof build>>,
  headers: Record<string, string>,
  field: string,
  idField: string,
  size = 2,
) {
  const ids: string[] = []
  const pages: ConnectionPage[] = []
  let after: string | null = null
  for (let guard = 0; guard < 100; guard++) {
    const body = await graphql(
      app,
      headers,
      `query($after: String) { ${field}(first: ${size}, after: $after) { edges { cursor node { ${idField} } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
      { after },
    )
    if (body.errors) throw new Error(JSON.stringify(body.errors))
    const page = body.data![field] as ConnectionPage
    pages.push(page)
    ids.push(...page.edges.map((edge) => String(edge.node[idField])))
    if (!page.pageInfo.hasNextPage) break
    after = page.pageInfo.endCursor
  }
  return { ids, pages }
}

t.test(
  'each root connection pages through the same records as its list: none skipped, none repeated, hasNextPage false at the end',
  async (t) => {
    const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
    for (const [field, list, idField] of [
      ['ordersConnection', 'orders', 'id'],
      ['usersConnection', 'users', 'id'],
      ['articlesConnection', 'articles', 'id'],
      ['productsConnection', 'products', 'sku'],
    ] as const) {
      const all = await graphql(app, admin, `{ ${list}(first: 100) { ${idField} } }`)
      const expected = (all.data![list] as Array<Record<string, unknown>>).map((record) => String(record[idField]))
      t.ok(expected.length >= 3, `${list}: the demo data has several pages of 2`)
      const { ids, pages } = await pageThrough(app, admin, field, idField)
      t.same(ids, expected, `${field}: every ${list} record once, in the list's order`)
      t.equal(pages.length, Math.ceil(expected.length / 2), `${field}: ${pages.length} pages`)
      t.equal(pages.at(-1)!.pageInfo.hasNextPage, false, `${field}: the last page says no more follow`)
      t.equal(pages[0]!.pageInfo.hasPreviousPage, false, `${field}: the first page has nothing before it`)
      for (const page of pages) {
        t.equal(page.pageInfo.startCursor, page.edges[0]?.cursor ?? null, `${field}: startCursor is the first edge's cursor`)
        t.equal(page.pageInfo.endCursor, page.edges.at(-1)?.cursor ?? null, `${field}: endCursor is the last edge's cursor`)
      }
    }
  },
)

t.test('paging the connection stays exact while records are inserted between pages (keyset, not offset)', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const first = await graphql(app, admin, '{ productsConnection(first: 2) { edges { node { sku } } pageInfo { hasNextPage endCursor } } }')
  const page1 = first.data!.productsConnection as ConnectionPage
  // A product sorting before the cursor appears between pages: keyset paging neither repeats nor skips.
  await graphql(app, admin, 'mutation { createProduct(input: {sku: "AA-000", name: "First in the catalog", price: 1}) { id } }')
  const rest = await graphql(
    app,
    admin,
    'query($after: String) { productsConnection(first: 100, after: $after) { edges { node { sku } } pageInfo { hasNextPage hasPreviousPage } } }',
    {
      after: page1.pageInfo.endCursor,
    },
  )
  const page2 = rest.data!.productsConnection as ConnectionPage
  const seen = [...page1.edges, ...page2.edges].map((edge) => edge.node.sku)
  t.same(seen, ['CB-404', 'HD-505', 'KB-101', 'MN-303', 'MS-202', 'WC-606'])
  t.equal(page2.pageInfo.hasNextPage, false)
  t.equal(page2.pageInfo.hasPreviousPage, true, 'a page fetched with after has records before it')
})

t.test("a connection obeys its list's rules: page-size bounds, authorization, filters and foreign cursors", async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  for (const first of [0, 101]) {
    const body = await graphql(app, admin, `{ ordersConnection(first: ${first}) { edges { cursor } } }`)
    t.equal(body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', `first: ${first} is refused`)
  }
  const forbiddenUsers = await graphql(app, grace, '{ usersConnection { edges { node { id } } } }')
  t.equal(forbiddenUsers.errors?.[0]?.extensions?.code, 'FORBIDDEN', 'usersConnection is admin only, like users')
  const forbiddenFilter = await graphql(app, grace, '{ ordersConnection(userId: 3) { edges { node { id } } } }')
  t.equal(forbiddenFilter.errors?.[0]?.extensions?.code, 'FORBIDDEN', 'filtering by user is admin only, like orders')

  const own = await graphql(
    app,
    grace,
    '{ ordersConnection(first: 100) { edges { node { id user { databaseId } } } } orders(first: 100) { id } }',
  )
  const edges = (own.data!.ordersConnection as ConnectionPage).edges
  t.ok(
    edges.length > 0 && edges.every((edge) => (edge.node.user as { databaseId: number }).databaseId === 2),
    'a caller without admin sees only its own orders',
  )
  t.same(
    edges.map((edge) => edge.node.id),
    (own.data!.orders as Array<{ id: string }>).map((order) => order.id),
    'the same orders as the list',
  )

  const paid = await graphql(
    app,
    admin,
    '{ ordersConnection(first: 1, status: pending) { edges { node { status } } pageInfo { endCursor } } }',
  )
  const cursor = (paid.data!.ordersConnection as ConnectionPage).pageInfo.endCursor
  const mismatch = await graphql(
    app,
    admin,
    'query($after: String) { ordersConnection(status: paid, after: $after) { edges { cursor } } }',
    { after: cursor },
  )
  t.equal(mismatch.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', 'a cursor keeps the filter it was made for')
  const foreign = await graphql(app, admin, 'query($after: String) { articlesConnection(after: $after) { edges { cursor } } }', {
    after: cursor,
  })
  t.equal(foreign.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', "another list's cursor is refused")
})

t.test('the deprecated record cursor still works and equals the edge cursor of the same list', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const body = await graphql(app, admin, '{ ordersConnection(first: 3, status: pending) { edges { cursor node { cursor } } } }')
  const edges = (body.data!.ordersConnection as ConnectionPage).edges
  t.ok(edges.length > 0)
  for (const edge of edges) t.equal(edge.node.cursor, edge.cursor)
})

t.test("Article.commentsConnection pages each article's comments, batched: the same statements for 1, 10 and 40 articles", async (t) => {
  let statements = 0
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false', GRAPHQL_MAX_COST: '100000' } })
  await sql`insert into articles (author_id, title, body) select 1 + n % 4, 'Load article ' || n, 'body' from generate_series(1, 40) as n`.execute(
    app.db,
  )
  await sql`
    insert into comments (article_id, author_id, body, created_at)
    select a.id, 2, 'comment ' || k, now() + (k || ' seconds')::interval
    from articles a cross join generate_series(1, 3) as k where a.title like 'Load article %'`.execute(app.db)
  const counts: number[] = []
  for (const first of [1, 10, 40]) {
    statements = 0
    const body = await graphql(
      app,
      admin,
      `{ articlesConnection(first: ${first}) { edges { node { id author { name } commentsConnection(first: 2) { edges { cursor node { body author { name } } } pageInfo { hasNextPage endCursor } } } } } }`,
    )
    if (body.errors) throw new Error(JSON.stringify(body.errors))
    const articles = (body.data!.articlesConnection as ConnectionPage).edges
    t.equal(articles.length, first)
    for (const article of articles) {
      const comments = article.node.commentsConnection as ConnectionPage
      t.same(
        comments.edges.map((edge) => edge.node.body),
        ['comment 1', 'comment 2'],
      )
      t.equal(comments.pageInfo.hasNextPage, true, 'a third comment follows')
    }
    counts.push(statements)
  }
  t.equal(new Set(counts).size, 1, `statements per page size: ${counts.join(', ')}`)
  t.ok(counts[0]! <= 6, `a small, fixed number of statements (${counts[0]})`)

  // The next page after the edge cursor: the third comment, and no more.
  const first = await graphql(
    app,
    admin,
    '{ articlesConnection(first: 1) { edges { node { id commentsConnection(first: 2) { pageInfo { endCursor } } } } } }',
  )
  const article = (first.data!.articlesConnection as ConnectionPage).edges[0]!.node
  const after = (article.commentsConnection as ConnectionPage).pageInfo.endCursor
  const next = await graphql(
    app,
    admin,
    'query($id: ID!, $after: String) { article(id: $id) { commentsConnection(first: 2, after: $after) { edges { node { body } } pageInfo { hasNextPage hasPreviousPage } } } }',
    {
      id: article.id,
      after,
    },
  )
  const page = (next.data!.article as { commentsConnection: ConnectionPage }).commentsConnection
  t.same(
    page.edges.map((edge) => edge.node.body),
    ['comment 3'],
  )
  t.same(page.pageInfo, { hasNextPage: false, hasPreviousPage: true })
})

t.test('ordersConnection { node { user items { product } } } issues the same statements for 1, 10 and 50 orders', async (t) => {
  let statements = 0
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false', GRAPHQL_MAX_COST: '100000' } })
  await sql`
    insert into orders (user_id, status, total, created_at, updated_at)
    select 1 + n % 4, 'pending', 8900, now() - (n || ' minutes')::interval, now() from generate_series(1, 60) as n`.execute(app.db)
  await sql`
    insert into order_items (order_id, position, sku, qty, unit_price)
    select o.id, 0, 'KB-101', 1, 8900 from orders o where not exists (select 1 from order_items i where i.order_id = o.id)`.execute(app.db)
  const counts: number[] = []
  for (const first of [1, 10, 50]) {
    statements = 0
    const body = await graphql(
      app,
      admin,
      `{ ordersConnection(first: ${first}) { edges { cursor node { id user { name company { name } } items { sku product { id name } } } } pageInfo { hasNextPage } } }`,
    )
    if (body.errors) throw new Error(JSON.stringify(body.errors))
    t.equal((body.data!.ordersConnection as ConnectionPage).edges.length, first)
    counts.push(statements)
  }
  t.equal(new Set(counts).size, 1, `statements per page size: ${counts.join(', ')}`)
  t.ok(counts[0]! <= 8, `a small, fixed number of statements (${counts[0]})`)
})

t.test('a connection costs what the equivalent list costs, plus the scalars selected on its edges and pageInfo', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const cost = async (query: string, variables?: Record<string, unknown>) => {
    const body = await graphql(app, admin, query, variables)
    t.notOk(body.errors, query)
    return body.extensions!.cost!.requestedQueryCost
  }
  // [list, connection, the list's cost, the connection's cost]
  const pairs: Array<[string, string, number, number]> = [
    [
      '{ orders(first: 10) { id items { sku product { name } } } }',
      '{ ordersConnection(first: 10) { edges { cursor node { id items { sku product { name } } } } pageInfo { hasNextPage endCursor } } }',
      820,
      10 * (1 + 82) + 1,
    ],
    ['{ orders { id } }', '{ ordersConnection { edges { node { id } } } }', 20 * 2, 20 * 2],
    [
      '{ users(first: 5) { orders(last: 2) { id } } }',
      '{ usersConnection(first: 5) { edges { node { orders(last: 2) { id } } } } }',
      5 * (1 + 2 * 2),
      5 * (1 + 2 * 2),
    ],
    [
      '{ articles(first: 3) { comments(first: 4) { author { name } } } }',
      '{ articlesConnection(first: 3) { edges { node { commentsConnection(first: 4) { edges { node { author { name } } } } } } } }',
      3 * (1 + 4 * (1 + 2)),
      3 * (1 + 4 * (1 + 2)),
    ],
    [
      '{ products(first: 7) { sku } }',
      '{ productsConnection(first: 7) { pageInfo { hasNextPage } edges { cursor node { sku } } } }',
      7 * 2,
      7 * (1 + 2) + 1,
    ],
  ]
  for (const [list, connection, listCost, connectionCost] of pairs) {
    t.equal(await cost(list), listCost, list)
    t.equal(await cost(connection), connectionCost, connection)
  }
  t.equal(
    await cost('query($n: Int = 30) { ordersConnection(first: $n) { edges { node { id } } } }'),
    30 * 2,
    'a variable default is the page size',
  )
  t.equal(
    await cost('query($n: Int = 30) { ordersConnection(first: $n) { edges { node { id } } } }', { n: 4 }),
    4 * 2,
    'a sent variable is the page size',
  )
  t.equal(await cost('{ ordersConnection(first: 9) { pageInfo { hasNextPage } } }'), 1, "no edges selected: only pageInfo's scalar")
})

t.test(
  'a fragment spread into connections of different page sizes is priced per page size, and fragments on edges and nodes multiply correctly',
  async (t) => {
    const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
    const priced = async (query: string) => (await graphql(app, admin, query)).extensions!.cost!.requestedQueryCost
    t.equal(
      await priced(`
      fragment Page on OrderConnection { edges { ...Edge } pageInfo { endCursor } }
      fragment Edge on OrderEdge { cursor node { ...Fields } }
      fragment Fields on Order { id user { name } }
      { small: ordersConnection(first: 2) { ...Page } large: ordersConnection(first: 50) { ...Page } }`),
      // An edge: its cursor (⌈0.1⌉) and its node (1 + ⌈0.1⌉ + user 2); pageInfo: ⌈0.1⌉.
      2 * (1 + 4) + 1 + (50 * (1 + 4) + 1),
      'the same fragment under first: 2 and first: 50',
    )
    t.equal(
      await priced(`{ a: ordersConnection(first: 3) { ... on OrderConnection { edges { node { id } } } } b: orders(first: 3) { id } }`),
      3 * 2 + 3 * 2,
      'inline fragments on the connection keep its page size',
    )
  },
)

t.test('the limits refuse deep or expensive connection queries before anything runs', async (t) => {
  let statements = 0
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  const modern = { ...admin, accept: 'application/graphql-response+json' }
  statements = 0
  const expensive = await gql(
    app,
    {
      query: '{ ordersConnection(first: 100) { edges { node { items { product { name } } user { orders(last: 100) { id } } } } } }',
    },
    modern,
  )
  t.equal(expensive.statusCode, 422)
  const body = expensive.json()
  t.equal(body.errors[0].extensions.code, 'COST_LIMIT_EXCEEDED')
  t.equal(
    body.extensions.cost.requestedQueryCost,
    100 * (1 + 20 * (1 + 2) + (1 + 100 * 2)),
    'priced as the refused list example of docs/graphql.md',
  )
  t.equal(statements, 0, 'nothing reached the database')

  // edges and node are levels of the selection: a connection nests two deeper than its list.
  const deep = await gql(
    app,
    {
      query:
        '{ articlesConnection(first: 1) { edges { node { commentsConnection(first: 1) { edges { node { article { commentsConnection(first: 1) { edges { node { id } } } } } } } } } } }',
    },
    modern,
  )
  t.equal(deep.statusCode, 422)
  t.equal(deep.json().errors[0].extensions.code, 'DEPTH_LIMIT_EXCEEDED')
  t.equal(statements, 0, 'nothing reached the database')
})

t.test("Product.id is the sku's global id: stable, the same wherever the product is reached", async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const body = await graphql(
    app,
    admin,
    '{ productsConnection(first: 2) { edges { node { id sku } } } product(sku: "KB-101") { id } orders(first: 1) { items { product { id sku } } } }',
  )
  t.notOk(body.errors)
  for (const edge of (body.data!.productsConnection as ConnectionPage).edges)
    t.equal(edge.node.id, toGlobalId('Product', String(edge.node.sku)))
  t.same(body.data!.product, { id: toGlobalId('Product', 'KB-101') })
  const item = (body.data!.orders as Array<{ items: Array<{ product: { id: string; sku: string } }> }>)[0]!.items[0]!
  t.equal(item.product.id, toGlobalId('Product', item.product.sku), 'the same identity wherever the product is reached')
})
