/**
 * A path with an empty segment where a route has a parameter (`/orders/`, `/orders//items`) is no
 * route: 404 problem+json, with or without a credential, never the 400 of an invalid id nor the
 * 405 of a path that exists.
 */
import t from 'tap'
import { bearer, build } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write articles:write')

t.test('GET /api/v1/orders/ and other empty parameters are 404 NOT_FOUND, whoever asks', async (t) => {
  const app = await build(t)
  for (const [method, url] of [
    ['GET', '/api/v1/orders/'],
    ['PUT', '/api/v1/orders/'],
    ['DELETE', '/api/v1/orders/'],
    ['POST', '/api/v1/orders/'],
    ['GET', '/api/v1/orders//items'],
    ['POST', '/api/v1/orders//payment'],
    ['GET', '/api/v1/articles/'],
    ['GET', '/api/v1/users//orders'],
    ['GET', '/api/v1/orders/?limit=1'],
  ] as const) {
    for (const headers of [grace, {}]) {
      const response = await app.inject({ method, url, headers })
      const who = 'authorization' in headers ? 'with a token' : 'without one'
      t.equal(response.statusCode, 404, `${method} ${url} ${who}`)
      t.match(response.headers['content-type'], /^application\/problem\+json/)
      t.match(response.json(), { status: 404, code: 'NOT_FOUND', type: '/problems/not-found', instance: url })
      t.equal(response.headers.allow, undefined, 'no Allow: no method is allowed there')
    }
  }
})

t.test('the paths with a value there still answer, and an invalid id is still 400', async (t) => {
  const app = await build(t)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders', headers: grace })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders/3', headers: grace })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders/3/items', headers: grace })).statusCode, 200)
  const invalid = await app.inject({ method: 'GET', url: '/api/v1/orders/0x10', headers: grace })
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.json().code, 'VALIDATION_FAILED')
  const wrongMethod = await app.inject({ method: 'POST', url: '/api/v1/orders/3', headers: grace })
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE')
})
