/**
 * Webhook endpoints as a resource (decisions §13): the secret is shown once, at creation; a caller
 * sees and deletes only its own endpoints (an admin all of them; another's is 404); the types filter
 * and the body are validated; the deliveries list pages with a cursor.
 */
import t from 'tap'
import { bearer, build } from '../../helper.ts'

const env = { WEBHOOK_ALLOW_PRIVATE: 'true' }
const url = 'http://127.0.0.1:9/hook'

t.test('the secret is shown at creation only; owners and admins see their endpoints, others get 404', async (t) => {
  const app = await build(t, { env })
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    headers: bearer(2),
    payload: { url, types: ['order.created'] },
  })
  t.equal(created.statusCode, 201)
  const endpoint = created.json()
  t.match(endpoint, { url, types: ['order.created'], enabled: true, owner_id: 2, secret: /^whsec_[A-Za-z0-9+/]+=*$/ })
  t.match(created.headers.location, new RegExp(`/api/v1/webhook-endpoints/${endpoint.id}$`))

  const mine = await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: bearer(2) })
  t.equal(mine.statusCode, 200)
  t.notOk('secret' in mine.json(), 'no secret after creation')
  const list = await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: bearer(2) })
  t.equal(list.json().page.total, 1)
  t.notOk('secret' in list.json().data[0])

  const other = await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: bearer(3) })
  t.equal(other.statusCode, 404)
  t.same((await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: bearer(3) })).json().data, [])
  const otherDelete = await app.inject({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: bearer(3) })
  t.equal(otherDelete.statusCode, 404)
  const otherLog = await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`, headers: bearer(3) })
  t.equal(otherLog.statusCode, 404)

  const admin = await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: bearer(1, 'admin') })
  t.same(
    admin.json().data.map((e: { id: number }) => e.id),
    [endpoint.id],
  )

  const deleted = await app.inject({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: bearer(2) })
  t.equal(deleted.statusCode, 204)
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: bearer(2) })).statusCode, 404)
})

t.test('a bad body is 400 naming the field, and stores nothing', async (t) => {
  const app = await build(t, { env })
  for (const payload of [
    {},
    { url: 'http://127.0.0.1:9/', types: ['order.deleted'] },
    { url: 'http://127.0.0.1:9/', types: [] },
    { url: 'x', extra: 1 },
  ]) {
    const response = await app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(2), payload })
    t.equal(response.statusCode, 400, JSON.stringify(payload))
  }
  t.same((await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: bearer(2) })).json().data, [])
  const missing = await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: {} })
  t.equal(missing.statusCode, 401)
})

t.test('endpoints and deliveries page with cursors', async (t) => {
  const app = await build(t, { env })
  const ids: number[] = []
  for (let i = 0; i < 3; i++) {
    ids.push((await app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(2), payload: { url } })).json().id)
  }
  const first = (await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints?limit=2', headers: bearer(2) })).json()
  t.same(
    first.data.map((e: { id: number }) => e.id),
    ids.slice(0, 2),
  )
  t.equal(first.page.total, 3)
  const second = (
    await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints?limit=2&cursor=${first.page.cursor}`, headers: bearer(2) })
  ).json()
  t.same(
    second.data.map((e: { id: number }) => e.id),
    ids.slice(2),
  )
  t.equal(second.page.cursor, null)
  const bad = await app.inject({
    method: 'GET',
    url: `/api/v1/webhook-endpoints/${ids[0]}/deliveries?cursor=${first.page.cursor}`,
    headers: bearer(2),
  })
  t.equal(bad.statusCode, 400, "another list's cursor is refused")
  const retryMissing = await app.inject({
    method: 'POST',
    url: `/api/v1/webhook-endpoints/${ids[0]}/deliveries/999999/retry`,
    headers: bearer(2),
  })
  t.equal(retryMissing.statusCode, 404)
})
