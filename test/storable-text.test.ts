/**
 * Text PostgreSQL cannot store (U+0000, an unpaired UTF-16 surrogate) is refused in both styles
 * (decisions §12): REST 400 VALIDATION_FAILED and GraphQL BAD_USER_INPUT, each naming the field,
 * and nothing is stored. Bodies are sent as JSON text with `\u0000` / `\ud800` escapes, the way a
 * client's JSON encoder writes them, so the parser path is the one under test.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { findUnstorableText, unstorableReason } from '../src/storable-text.ts'
import { bearer, build, gql } from './helper.ts'

const NUL = '\u0000'
const LONE_HIGH = '\ud800'
const LONE_LOW = '\udc00'

t.test('unstorableReason: NUL and unpaired surrogates anywhere; pairs and other controls are fine', async (t) => {
  for (const text of [
    NUL,
    `KB${NUL}`,
    `${NUL}x`,
    LONE_HIGH,
    LONE_LOW,
    `a${LONE_HIGH}b`,
    `${LONE_LOW}${LONE_HIGH}`,
    `😀${LONE_HIGH}`,
    `x${LONE_HIGH}`,
  ]) {
    t.type(unstorableReason(text), 'string', JSON.stringify(text))
  }
  for (const text of ['', 'plain', '😀', '\ud83d\ude00', 'tab\tnewline\n\u0001\u007f', 'é中文', '\uFFFD']) {
    t.equal(unstorableReason(text), undefined, JSON.stringify(text))
  }
})

t.test('findUnstorableText names every bad string and key by its path', async (t) => {
  const value = {
    items: [
      { sku: 'KB-101', qty: 1 },
      { sku: `KB${NUL}`, qty: 2 },
    ],
    title: LONE_HIGH,
    [`k${NUL}`]: 'v',
    ok: ['a', 1, null, true],
  }
  t.same(
    findUnstorableText(value)
      .map((found) => found.path)
      .sort(),
    [['items', 1, 'sku'], ['title'], [`k${NUL}`]].sort(),
  )
  t.same(findUnstorableText({ fine: ['text', { nested: '😀' }], n: 5 }), [])
  t.same(
    findUnstorableText(NUL).map((found) => found.path),
    [[]],
    'a bare string is its own root',
  )
  let deep: unknown = `x${NUL}`
  for (let level = 0; level < 200_000; level += 1) deep = [deep]
  t.equal(findUnstorableText(deep)[0]?.path.length, 200_000, 'deep nesting does not overflow the stack')
})

const TABLES = ['orders', 'order_items', 'articles', 'comments', 'users', 'products', 'outbox', 'idempotency_keys'] as const

async function rowCounts(app: FastifyInstance): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of TABLES) {
    const row = await app.db.selectFrom(table).select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    counts[table] = Number(row.n)
  }
  return counts
}

async function orderStatus(app: FastifyInstance, id: number): Promise<string> {
  const row = await app.db.selectFrom('orders').select('status').where('id', '=', id).executeTakeFirstOrThrow()
  return row.status
}

interface RestCase {
  method: 'POST' | 'PATCH'
  url: string
  type?: string
  body: unknown
  field: { in: 'body'; name: string }
}

t.test('REST: a body or query string with unstorable text is 400 naming the field, and nothing is stored', async (t) => {
  const app = await build(t)
  const admin = bearer(1, 'admin')
  const cases: RestCase[] = [
    {
      method: 'POST',
      url: '/api/v1/orders',
      body: {
        items: [
          { sku: 'KB-101', qty: 1 },
          { sku: `KB${NUL}`, qty: 1 },
        ],
      },
      field: { in: 'body', name: '/items/1/sku' },
    },
    { method: 'POST', url: '/api/v1/articles', body: { title: LONE_HIGH, body: 'Text' }, field: { in: 'body', name: '/title' } },
    {
      method: 'PATCH',
      url: '/api/v1/articles/1',
      type: 'application/merge-patch+json',
      body: { body: `half ${LONE_LOW} pair` },
      field: { in: 'body', name: '/body' },
    },
    { method: 'POST', url: '/api/v1/articles/1/comments', body: { body: `Nice${NUL}` }, field: { in: 'body', name: '/body' } },
    { method: 'POST', url: '/api/v1/users', body: { name: `Ida${LONE_HIGH}` }, field: { in: 'body', name: '/name' } },
    {
      method: 'POST',
      url: '/api/v1/products',
      body: { sku: 'NEW-1', name: `Pad${NUL}`, price: 100 },
      field: { in: 'body', name: '/name' },
    },
    { method: 'POST', url: '/api/v1/orders/3/cancellation', body: { reason: `changed${NUL}mind` }, field: { in: 'body', name: '/reason' } },
    { method: 'POST', url: '/api/v1/orders/3/payment', body: { reason: LONE_LOW }, field: { in: 'body', name: '/reason' } },
  ]
  const before = await rowCounts(app)
  for (const { method, url, type, body, field } of cases) {
    const payload = JSON.stringify(body)
    t.match(payload, /\\u(0000|d800|dc00)/, 'the JSON text carries the escape, not the character')
    const response = await app.inject({ method, url, headers: { ...admin, 'content-type': type ?? 'application/json' }, payload })
    const label = `${method} ${url}`
    t.equal(response.statusCode, 400, label)
    t.match(response.headers['content-type'], /^application\/problem\+json/, label)
    t.equal(response.json().code, 'VALIDATION_FAILED', label)
    t.match(
      response.json().errors,
      [{ ...field, message: /cannot be stored|not valid Unicode/ }],
      `${label} names ${field.in} ${field.name}`,
    )
  }
  const list = await app.inject({ method: 'GET', url: `/api/v1/orders?status=pending&cursor=x${encodeURIComponent(NUL)}`, headers: admin })
  t.equal(list.statusCode, 400, 'a GET query parameter too')
  t.match(list.json().errors, [{ in: 'query', name: 'cursor' }])
  t.same(await rowCounts(app), before, 'no row was written')
  t.equal(await orderStatus(app, 3), 'pending', 'order 3 was neither cancelled nor paid')
  const article = await app.inject({ method: 'GET', url: '/api/v1/articles/1', headers: admin })
  t.notOk(article.body.includes('half'), 'article 1 was not patched')

  const paired = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: admin,
    payload: { title: 'Emoji 😀 ok', body: 'A surrogate pair is fine' },
  })
  t.equal(paired.statusCode, 201, 'a character outside the BMP (a surrogate pair) is stored')
  t.equal(paired.json().title, 'Emoji 😀 ok')
})

interface GraphqlCase {
  query: string
  variables?: Record<string, unknown>
  field: { in: 'argument' | 'variable'; name: string }
}

t.test('GraphQL: a variable or string literal with unstorable text is BAD_USER_INPUT naming it, and nothing is stored', async (t) => {
  const app = await build(t)
  const admin = bearer(1, 'admin')
  const cases: GraphqlCase[] = [
    {
      query: 'mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
      variables: { input: { items: [{ sku: `KB${NUL}`, qty: 1 }] } },
      field: { in: 'variable', name: 'input.items.0.sku' },
    },
    {
      query: 'mutation($title: String!) { createArticle(input: { title: $title, body: "Text" }) { id } }',
      variables: { title: LONE_HIGH },
      field: { in: 'variable', name: 'title' },
    },
    {
      query: 'mutation { addComment(articleId: 1, input: { body: "Nice\\u0000" }) { id } }',
      field: { in: 'argument', name: 'input.body' },
    },
    {
      query: 'mutation($input: CreateUserInput!) { createUser(input: $input) { id } }',
      variables: { input: { name: `Ida${LONE_LOW}` } },
      field: { in: 'variable', name: 'input.name' },
    },
    { query: 'mutation { cancelOrder(id: 3, reason: "changed\\u0000mind") { id } }', field: { in: 'argument', name: 'reason' } },
    { query: 'mutation($why: String = "x\\u0000") { refundOrder(id: 3, reason: $why) { id } }', field: { in: 'variable', name: 'why' } },
    {
      query: 'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 1 }, { sku: "\\u{0}", qty: 1 }] }) { id } }',
      field: { in: 'argument', name: 'input.items.1.sku' },
    },
    { query: 'query($sku: String!) { product(sku: $sku) { name } }', variables: { sku: NUL }, field: { in: 'variable', name: 'sku' } },
  ]
  const before = await rowCounts(app)
  for (const { query, variables, field } of cases) {
    const payload = JSON.stringify({ query, variables })
    const response = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...admin, 'content-type': 'application/json' },
      payload,
    })
    const body = response.json()
    t.equal(body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', query)
    t.match(
      body.errors[0].extensions.errors,
      [{ ...field, message: /cannot be stored|not valid Unicode/ }],
      `names ${field.in} ${field.name}`,
    )
    t.notOk(body.data, 'nothing executed')
  }
  const viaGet = await app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent('query($sku: String!) { product(sku: $sku) { name } }')}&variables=${encodeURIComponent(JSON.stringify({ sku: `K${NUL}` }))}`,
    headers: admin,
  })
  t.equal(viaGet.json().errors?.[0]?.extensions.code, 'BAD_USER_INPUT', 'GET with variables too')
  // GraphQL itself refuses a lone surrogate escape in a literal: a syntax error, before any of this.
  const literalSurrogate = await gql(app, 'mutation { createArticle(input: { title: "\\ud800", body: "x" }) { id } }', admin)
  t.equal(literalSurrogate.json().errors?.[0]?.extensions.code, 'GRAPHQL_PARSE_FAILED')
  t.same(await rowCounts(app), before, 'no row was written')
  t.equal(await orderStatus(app, 3), 'pending', 'order 3 was not cancelled')

  const fine = await gql(
    app,
    { query: 'mutation($t: String!) { createArticle(input: { title: $t, body: "x" }) { title } }', variables: { t: 'Emoji 😀' } },
    admin,
  )
  t.same(fine.json().data, { createArticle: { title: 'Emoji 😀' } }, 'a surrogate pair is stored')
})
