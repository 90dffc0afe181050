/**
 * Every operation of openapi.yaml, driven through a client generated from openapi.yaml, with every
 * response — successes and problems alike — checked against openapi.yaml by test/contract-validator.
 */
import t from 'tap'
import { contractClient } from '../contract-client.ts'
import { build, tokenFor } from '../helper.ts'

const auth = (sub: number, scope: string) => ({ authorization: `Bearer ${tokenFor(sub, scope)}` })

t.test('orders through the typed client', async (t) => {
  const app = await build(t)
  const grace = contractClient(app, t, auth(2, 'orders:read orders:write'))

  const created = await grace.POST('/orders', {
    body: { items: [{ sku: 'KB-101', qty: 2 }] },
    params: { header: { 'Idempotency-Key': 'typed-1' } },
  })
  t.equal(created.response.status, 201)
  const id = created.data!.id
  t.equal(created.data!.total, 17800)
  t.equal(
    (
      await grace.POST('/orders', { body: { items: [{ sku: 'KB-101', qty: 2 }] }, params: { header: { 'Idempotency-Key': 'typed-1' } } })
    ).response.headers.get('idempotent-replayed'),
    'true',
  )
  t.equal((await grace.POST('/orders', { body: { items: [{ sku: 'NOPE', qty: 1 }] } })).response.status, 422)
  t.equal((await grace.POST('/orders', { body: { items: [] } })).response.status, 400)

  const one = await grace.GET('/orders/{id}', { params: { path: { id } } })
  t.equal(one.data!.status, 'pending')
  const etag = one.response.headers.get('etag')!
  t.equal((await grace.GET('/orders/{id}', { params: { path: { id }, header: { 'If-None-Match': etag } } })).response.status, 304)
  t.same(Object.keys((await grace.GET('/orders/{id}', { params: { path: { id }, query: { fields: 'id,total' } } })).data!), ['id', 'total'])
  t.equal((await grace.GET('/orders/{id}', { params: { path: { id: 999999 } } })).response.status, 404)

  const list = await grace.GET('/orders', { params: { query: { limit: 2, sort: '-total', status: 'pending' } } })
  t.equal(list.data!.data.length, 2)
  t.equal((await grace.GET('/orders', { params: { query: { fields: 'id,status' } } })).response.status, 200)
  t.equal((await grace.GET('/orders/{id}/items', { params: { path: { id } } })).data!.data.length, 1)

  const replaced = await grace.PUT('/orders/{id}', {
    params: { path: { id }, header: { 'If-Match': etag } },
    body: { items: [{ sku: 'MS-202', qty: 1 }] },
  })
  t.equal(replaced.data!.total, 2900)
  t.equal(
    (
      await grace.PUT('/orders/{id}', {
        params: { path: { id }, header: { 'If-Match': etag } },
        body: { items: [{ sku: 'MS-202', qty: 3 }] },
      })
    ).response.status,
    412,
  )
  const patched = await grace.PATCH('/orders/{id}', { params: { path: { id } }, body: { items: [{ sku: 'MS-202', qty: 2 }] } })
  t.equal(patched.data!.total, 5800)

  t.equal((await grace.POST('/orders/{id}/payment', { params: { path: { id } }, body: { reason: 'card' } })).data!.status, 'paid')
  t.equal((await grace.POST('/orders/{id}/cancellation', { params: { path: { id } } })).response.status, 409)
  t.equal((await grace.POST('/orders/{id}/refund', { params: { path: { id } } })).data!.status, 'refunded')
  t.equal((await grace.DELETE('/orders/{id}', { params: { path: { id } } })).response.status, 409)
  const doomed = (await grace.POST('/orders', { body: { items: [{ sku: 'CB-404', qty: 1 }] } })).data!.id
  t.equal((await grace.POST('/orders/{id}/cancellation', { params: { path: { id: doomed } } })).data!.status, 'cancelled')
  t.equal((await grace.DELETE('/orders/{id}', { params: { path: { id: doomed } } })).response.status, 204)

  const alan = contractClient(app, t, auth(3, 'orders:read'))
  t.equal((await alan.GET('/orders/{id}', { params: { path: { id } } })).response.status, 403)
  const anonymous = contractClient(app, t)
  t.equal((await anonymous.GET('/orders', {})).response.status, 401)
})

t.test('articles, users and products through the typed client', async (t) => {
  const app = await build(t)
  const grace = contractClient(app, t, auth(2, 'articles:write orders:read'))
  const admin = contractClient(app, t, auth(1, 'admin'))

  const article = await grace.POST('/articles', { body: { title: 'Typed', body: 'Client' } })
  t.equal(article.response.status, 201)
  const id = article.data!.id
  t.equal((await grace.GET('/articles', { params: { query: { limit: 1, sort: 'title' } } })).data!.data.length, 1)
  t.equal((await grace.GET('/articles/{id}', { params: { path: { id } } })).data!.title, 'Typed')
  t.equal(
    (await grace.PUT('/articles/{id}', { params: { path: { id } }, body: { title: 'Typed 2', body: 'Client' } })).data!.title,
    'Typed 2',
  )
  t.equal((await grace.PATCH('/articles/{id}', { params: { path: { id } }, body: { body: 'Patched' } })).data!.body, 'Patched')
  t.equal((await grace.POST('/articles/{id}/comments', { params: { path: { id } }, body: { body: 'First!' } })).response.status, 201)
  t.equal((await grace.GET('/articles/{id}/comments', { params: { path: { id } } })).data!.data.length, 1)
  t.equal((await grace.DELETE('/articles/{id}', { params: { path: { id } } })).response.status, 204)

  t.equal((await grace.GET('/users/{id}', { params: { path: { id: 2 } } })).data!.name, 'Grace Hopper')
  t.equal((await grace.GET('/users/{id}', { params: { path: { id: 3 } } })).response.status, 403)
  t.equal((await grace.GET('/users/{id}/orders', { params: { path: { id: 2 } } })).data!.data.length, 3)
  t.equal((await grace.GET('/users', {})).response.status, 403)
  t.equal((await admin.GET('/users', { params: { query: { limit: 2 } } })).data!.page.total, 4)
  const user = await admin.POST('/users', { body: { name: 'Barbara Liskov', company_id: 2 } })
  t.equal(user.response.status, 201)
  t.equal((await admin.POST('/users', { body: { name: 'Nobody', company_id: 99 } })).response.status, 422)

  t.equal((await grace.GET('/products', { params: { query: { limit: 3 } } })).data!.page.total, 6)
  t.equal((await admin.POST('/products', { body: { sku: 'NEW-1', name: 'New', price: 100 } })).response.status, 201)
  t.equal((await admin.POST('/products', { body: { sku: 'NEW-1', name: 'New', price: 100 } })).response.status, 409)

  const meta = contractClient(app, t)
  t.equal((await meta.GET('/openapi.json', {})).response.status, 200)
})
