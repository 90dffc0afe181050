/**
 * What a key stores is what a replay returns, in no transport's terms (decisions §7): the record
 * and the outcome's kind (201 a creation), not REST's Location, which REST builds from the record
 * at its edge, for the first answer and for a replay alike. Rows an earlier version stored (REST's status and Location in them) still
 * replay, so an upgrade in the middle of a client's retries answers those retries the same.
 */
import t from 'tap'
import { sql } from 'kysely'
import { bearer, build, gql } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const body = { items: [{ sku: 'KB-101', qty: 1 }] }

const storedRow = async (app: Awaited<ReturnType<typeof build>>, key: string) =>
  (
    await sql<{ status: number; location: string | null; body: unknown }>`
      select status, location, body from idempotency_keys where key = ${key}`.execute(app.db)
  ).rows

const orderCount = async (app: Awaited<ReturnType<typeof build>>) =>
  Number((await sql<{ n: string }>`select count(*) as n from orders`.execute(app.db)).rows[0]!.n)

t.test('a keyed create stores the order and its kind (a creation, 201), no Location', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const headers = { ...grace, 'idempotency-key': 'stored-1' }
  const first = await app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload: body })
  t.equal(first.statusCode, 201)
  t.match(first.headers.location, /\/api\/v1\/orders\/\d+$/)
  t.same(await storedRow(app, 'stored-1'), [{ status: 201, location: null, body: first.json() }], 'the record, as answered')

  const replay = await app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload: body })
  t.equal(replay.statusCode, 201, "REST's own status for a creation")
  t.equal(replay.headers.location, first.headers.location, 'Location built again from the stored record')
  t.equal(replay.headers.etag, first.headers.etag)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.same(replay.json(), first.json())
})

t.test('a key an earlier version stored (with a Location in the row) replays the stored order', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const headers = { ...grace, 'idempotency-key': 'stored-2' }
  const first = await app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload: body })
  // The row as instances before the write pipeline moved wrote it: REST's Location beside the record.
  await sql`update idempotency_keys set location = 'http://old.example/api/v1/orders/1'
    where key = 'stored-2'`.execute(app.db)
  const before = await orderCount(app)

  const replay = await app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload: body })
  t.equal(replay.statusCode, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.equal(replay.headers.location, first.headers.location, "this server's Location for the record, not the stored one")
  t.same(replay.json(), first.json())
  t.equal(await orderCount(app), before, 'no second order')
})

t.test('GraphQL stores the same: the order, a creation (201, where earlier versions stored 200), no Location', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const query = 'mutation { createOrder(input: {items: [{sku: "KB-101", qty: 1}]}, idempotencyKey: "stored-4") { databaseId total } }'
  const first = await gql(app, query, grace)
  const created = first.json().data.createOrder
  const [row] = await storedRow(app, 'stored-4')
  t.equal(row?.status, 201)
  t.equal(row?.location, null)
  t.match(row?.body, { id: created.databaseId, total: created.total }, 'the order as the service returned it')
  const replay = await gql(app, query, grace)
  t.same(replay.json().data.createOrder, created)

  // A row as earlier versions stored a GraphQL creation: 200, the transport's answer then.
  await sql`update idempotency_keys set status = 200 where key = 'stored-4'`.execute(app.db)
  const older = await gql(app, query, grace)
  t.same(older.json().data.createOrder, created, 'replays the same order')
})
