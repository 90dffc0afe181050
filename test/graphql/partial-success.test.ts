/**
 * Partial success (decisions §12): mutation root fields are nullable, so in a request with several
 * mutations a failing one is null with an error naming its path, and the others keep their data —
 * the client learns what was created.
 */
import t from 'tap'
import { bearer, build, gql } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write articles:write')

const threeMutations = `mutation {
  first: createOrder(input: { items: [{ sku: "CB-404", qty: 2 }] }) { databaseId total }
  second: createOrder(input: { items: [{ sku: "CB-404", qty: 0 }] }) { id }
  third: createArticle(input: { title: "Kept", body: "The third mutation still ran." }) { databaseId title }
}`

t.test('three mutations, the middle one failing: it is null with its error, the other two keep their data', async (t) => {
  const app = await build(t)
  const ordersBefore = await app.db.selectFrom('orders').select('id').execute()
  for (const accept of ['application/json', 'application/graphql-response+json']) {
    const response = await gql(app, { query: threeMutations }, { ...grace, accept })
    t.equal(response.statusCode, 200, `${accept}: a response with data is 200`)
    const body = response.json() as {
      data: { first: { databaseId: number; total: number } | null; second: null; third: { databaseId: number; title: string } | null }
      errors: Array<{ path: string[]; extensions: { code: string } }>
    }
    t.equal(body.data.first?.total, 2400, `${accept}: the first mutation's order is in data`)
    t.equal(body.data.second, null)
    t.equal(body.data.third?.title, 'Kept', `${accept}: the third mutation ran and its article is in data`)
    t.same(
      body.errors.map((error) => [error.path, error.extensions.code]),
      [[['second'], 'BAD_USER_INPUT']],
    )
    // What data says was created was created, and nothing else.
    const order = await app.db
      .selectFrom('orders')
      .select(['id', 'total'])
      .where('id', '=', Number(body.data.first?.databaseId))
      .executeTakeFirst()
    t.equal(order?.total, 2400)
    const article = await app.db
      .selectFrom('articles')
      .select('title')
      .where('id', '=', Number(body.data.third?.databaseId))
      .executeTakeFirst()
    t.equal(article?.title, 'Kept')
  }
  const ordersAfter = await app.db.selectFrom('orders').select('id').execute()
  t.equal(ordersAfter.length, ordersBefore.length + 2, 'one order per request: the failed one stored nothing')
})

t.test('the schema declares every mutation field nullable', async (t) => {
  const app = await build(t)
  const response = await gql(app, '{ __type(name: "Mutation") { fields { name type { kind } } } }', grace)
  const fields = response.json().data.__type.fields as Array<{ name: string; type: { kind: string } }>
  t.ok(fields.length >= 12)
  t.same(
    fields.filter((field) => field.type.kind === 'NON_NULL').map((field) => field.name),
    [],
  )
})
