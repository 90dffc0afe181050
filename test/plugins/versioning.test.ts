/**
 * Media-type versioning (decisions §10) is checked by a hook of the routes under /api/ only
 * (decisions §19), and by the not-found handler for a path under /api/ that no route has.
 */
import t from 'tap'
import { bearer, build } from '../helper.ts'

const v2 = { accept: 'application/vnd.api+json; version=2' }

t.test('a version this server does not have is 406 under /api/, routed or not, and ignored elsewhere', async (t) => {
  const app = await build(t)
  const routed = await app.inject({ method: 'GET', url: '/api/v1/orders/1', headers: { ...bearer(1, 'admin'), ...v2 } })
  t.equal(routed.statusCode, 406)
  t.equal(routed.json().code, 'VERSION_NOT_ACCEPTABLE')
  t.equal(routed.headers['x-content-type-options'], 'nosniff')

  const unrouted = await app.inject({ method: 'GET', url: '/api/v1/no-such-thing', headers: v2 })
  t.equal(unrouted.statusCode, 406, 'an unknown path under /api/ too')
  t.equal(unrouted.json().code, 'VERSION_NOT_ACCEPTABLE')
  t.ok(unrouted.headers['x-request-id'])

  const wrongMethod = await app.inject({ method: 'PUT', url: '/api/v1/orders', headers: v2 })
  t.equal(wrongMethod.statusCode, 406, 'before the 405 of a known path')

  t.equal((await app.inject({ method: 'GET', url: '/healthz', headers: v2 })).statusCode, 200, 'not outside /api/')
  t.equal((await app.inject({ method: 'GET', url: '/no-such-thing', headers: v2 })).statusCode, 404)

  const served = await app.inject({
    method: 'GET',
    url: '/api/v1/orders/1',
    headers: { ...bearer(1, 'admin'), accept: 'application/vnd.api+json; version=1' },
  })
  t.equal(served.statusCode, 200, 'version 1 is served')
})
