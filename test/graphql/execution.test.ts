import t from 'tap'
import { bearer, build } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write articles:write')

function gql(app: Awaited<ReturnType<typeof build>>, query: string, headers: Record<string, string> = grace, variables?: unknown) {
  return app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, ...(variables ? { variables } : {}) } })
}

t.test('mutations in one request run serially, in order', async (t) => {
  const app = await build(t)
  const created = (await gql(app, 'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }) { id } }')).json().data.createOrder
  // refund only succeeds if payment has already run: parallel execution would fail it.
  const response = await gql(
    app,
    `mutation { pay: payOrder(id: "${created.id}") { status } refund: refundOrder(id: "${created.id}") { status } }`,
  )
  t.notOk(response.json().errors)
  t.same(response.json().data, { pay: { status: 'paid' }, refund: { status: 'refunded' } })
  const events = await app.db.selectFrom('outbox').select('payload').where('topic', '=', 'order.status_changed').orderBy('id').execute()
  t.same(
    events.map((event) => (typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload).to),
    ['paid', 'refunded'],
  )
})

t.test('partial success: a forbidden nullable field is null with a FORBIDDEN error, the rest is data', async (t) => {
  const app = await build(t)
  const response = await gql(app, '{ me { name } other: user(id: 3) { name } order(id: 3) { total } }')
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.same(body.data, { me: { name: 'Grace Hopper' }, other: null, order: { total: 11300 } })
  t.equal(body.errors.length, 1)
  t.same(body.errors[0].path, ['other'])
  t.equal(body.errors[0].extensions.code, 'FORBIDDEN')
})

t.test('errors carry extensions.code, and internals never leak', async (t) => {
  const app = await build(t)
  const conflict = await gql(app, 'mutation { refundOrder(id: 3) { id } }')
  t.equal(conflict.json().errors[0].extensions.code, 'CONFLICT')
  const badSku = await gql(app, 'mutation { createOrder(input: { items: [{ sku: "NOPE", qty: 1 }] }) { id } }')
  t.equal(badSku.json().errors[0].extensions.code, 'BAD_USER_INPUT')
  const badId = await gql(app, '{ order(id: "abc") { id } }')
  t.equal(badId.json().errors[0].extensions.code, 'BAD_USER_INPUT')
  t.same((await gql(app, '{ order(id: 999999) { id } }')).json().data, { order: null }, 'a missing record is null')
})

t.test('the same idempotencyKey runs a mutation once', async (t) => {
  const app = await build(t)
  const mutation = 'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }, idempotencyKey: "gql-1") { id } }'
  const first = (await gql(app, mutation)).json().data.createOrder.id
  const second = (await gql(app, mutation)).json().data.createOrder.id
  t.equal(second, first)
  const reused = await gql(app, 'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 2 }] }, idempotencyKey: "gql-1") { id } }')
  t.equal(reused.json().errors[0].extensions.code, 'BAD_USER_INPUT')
})

t.test('the depth limit rejects before execution, without touching the database', async (t) => {
  let statements = 0
  // The outbox relay's polling would be counted too.
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  const deep = '{ me { orders { user { orders { user { orders { user { orders { user { orders { user { name } } } } } } } } } } } }'
  statements = 0
  const response = await gql(app, deep)
  const body = response.json()
  t.equal(body.errors[0].extensions.code, 'DEPTH_LIMIT_EXCEEDED')
  t.equal(statements, 0, 'no SQL ran')
  const shallow = await gql(app, '{ me { orders(last: 1) { user { name } } } }')
  t.notOk(shallow.json().errors)
})

t.test('GraphQL-over-HTTP status codes for both media types', async (t) => {
  const app = await build(t)
  const modern = { ...grace, accept: 'application/graphql-response+json' }
  const parse = await gql(app, '{ me { name ', modern)
  t.equal(parse.statusCode, 400)
  t.match(parse.headers['content-type'], /^application\/graphql-response\+json/)
  t.equal(parse.json().errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED')
  const invalid = await gql(app, '{ me { nope } }', modern)
  t.equal(invalid.statusCode, 422)
  t.equal(invalid.json().errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
  const ok = await gql(app, '{ me { name } }', modern)
  t.equal(ok.statusCode, 200)

  const legacy = { ...grace, accept: 'application/json' }
  t.equal((await gql(app, '{ me { name ', legacy)).statusCode, 200)
  t.equal((await gql(app, '{ me { nope } }', legacy)).statusCode, 200)
  t.equal((await gql(app, '{ me { nope } }', legacy)).json().errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
})

t.test('queries may use GET; a mutation over GET is 405 with Allow: POST', async (t) => {
  const app = await build(t)
  const query = await app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent('{ me { name } }')}`, headers: grace })
  t.same(query.json().data, { me: { name: 'Grace Hopper' } })
  for (const accept of ['application/json', 'application/graphql-response+json']) {
    const mutation = await app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('mutation { deleteOrder(id: 3) }')}`,
      headers: { ...grace, accept },
    })
    t.equal(mutation.statusCode, 405, accept)
    t.equal(mutation.headers.allow, 'POST')
    t.same(
      mutation.json().errors.map((e: { extensions: { code: string } }) => e.extensions.code),
      ['BAD_REQUEST'],
      'a request problem, not a problem of its input',
    )
  }
  const still = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: grace })
  t.equal(still.statusCode, 200, 'nothing was deleted')
})

t.test(
  'variables: one used where its type does not fit, or never defined, fails validation; a value that does not coerce is the input',
  async (t) => {
    const app = await build(t)
    const modern = { ...grace, accept: 'application/graphql-response+json' }
    const cases: Array<[string, string, Record<string, unknown> | undefined, string]> = [
      ['a variable of the wrong type', 'query ($n: String) { orders(first: $n) { id } }', { n: '5' }, 'GRAPHQL_VALIDATION_FAILED'],
      ['an undefined variable', '{ orders(first: $n) { id } }', undefined, 'GRAPHQL_VALIDATION_FAILED'],
      ['a value that does not coerce', 'query ($n: Int) { orders(first: $n) { id } }', { n: 'five' }, 'BAD_USER_INPUT'],
      ['a required value not sent', 'query ($n: Int!) { orders(first: $n) { id } }', undefined, 'BAD_USER_INPUT'],
    ]
    for (const [name, query, variables, code] of cases) {
      // Twice: Mercurius checks the variables itself on a document's first run, not on the next.
      for (const run of ['first', 'second']) {
        const response = await gql(app, query, modern, variables)
        t.equal(response.statusCode, 422, `${name} (${run} run)`)
        t.same(
          response.json().errors.map((e: { extensions: { code: string } }) => e.extensions.code),
          [code],
          `${name} (${run} run)`,
        )
      }
    }
  },
)

t.test('HEAD, which Fastify answers with the GET handler, runs no mutation either', async (t) => {
  let statements = 0
  const app = await build(t, { onQuery: () => void statements++, env: { EVENTS_RELAY: 'false' } })
  statements = 0
  const mutation = await app.inject({
    method: 'HEAD',
    url: `/graphql?query=${encodeURIComponent('mutation { deleteOrder(id: 3) }')}`,
    headers: grace,
  })
  t.equal(mutation.statusCode, 405)
  t.equal(mutation.headers.allow, 'POST')
  t.equal(statements, 0, 'no SQL ran')
  const query = await app.inject({ method: 'HEAD', url: `/graphql?query=${encodeURIComponent('{ me { name } }')}`, headers: grace })
  t.equal(query.statusCode, 200, 'a query over HEAD is answered like GET')
  const still = await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: grace })
  t.equal(still.statusCode, 200, 'nothing was deleted')
})
