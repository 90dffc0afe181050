/**
 * `Read-After-LSN` as a client sends it (decisions §15, openapi.yaml components/parameters/ReadAfterLsn):
 * a WAL position is accepted on every read, REST and GraphQL, with or without replicas; anything
 * else is 400 naming the header (REST: VALIDATION_FAILED, as any parameter; /graphql: BAD_REQUEST,
 * as any request-level problem), and changes nothing. (With replicas, what the
 * position does is test/db/read-replicas.test.ts.)
 */
import t from 'tap'
import { bearer, build, gql } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const MALFORMED = ['latest', '16', '16/', '/B374D848', '16/B374D848/0', '123456789/0', '16/B374D84G', '-1/0']

t.test('a read that sends a WAL position is served as without it', async (t) => {
  const app = await build(t)
  for (const position of ['0/0', '16/B374D848', 'ffffffff/FFFFFFFF']) {
    const rest = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { ...grace, 'read-after-lsn': position } })
    t.equal(rest.statusCode, 200, `REST, ${position}`)
    const graphql = await gql(app, '{ me { databaseId } }', { ...grace, 'read-after-lsn': position })
    t.equal(graphql.statusCode, 200, `GraphQL, ${position}`)
    t.same(graphql.json().data, { me: { databaseId: '2' } })
  }
})

t.test('a malformed Read-After-LSN on a REST read is 400 VALIDATION_FAILED naming the header', async (t) => {
  const app = await build(t)
  for (const sent of MALFORMED) {
    for (const url of ['/api/v1/orders', '/api/v1/orders/1', '/api/v1/events']) {
      const response = await app.inject({ method: 'GET', url, headers: { ...grace, 'read-after-lsn': sent } })
      t.equal(response.statusCode, 400, `${url}, "${sent}"`)
      t.match(response.headers['content-type'], /^application\/problem\+json/)
      t.match(response.json(), { code: 'VALIDATION_FAILED', errors: [{ in: 'header', name: 'read-after-lsn' }] })
    }
  }
})

t.test('a malformed Read-After-LSN on /graphql is 400 BAD_REQUEST naming the header, and runs nothing', async (t) => {
  const app = await build(t)
  const count = async () => (await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n
  const before = await count()
  for (const sent of MALFORMED) {
    const query = await gql(app, '{ me { databaseId } }', { ...grace, 'read-after-lsn': sent })
    t.equal(query.statusCode, 400, `a query, "${sent}"`)
    t.match(query.json(), { errors: [{ message: /Read-After-LSN/, extensions: { code: 'BAD_REQUEST' } }] })
    t.notOk(query.json().data, 'no data')
    const mutation = await gql(app, 'mutation { createOrder(input: { items: [{ sku: "KB-101", qty: 1 }] }) { databaseId } }', {
      ...grace,
      'read-after-lsn': sent,
    })
    t.equal(mutation.statusCode, 400, `a mutation, "${sent}"`)
  }
  t.equal(await count(), before, 'no order was created')
})
