/**
 * A problem is application/problem+json, or application/json for a client whose Accept names
 * application/json alone (decisions §16): openapi.yaml lists both for every problem response, so
 * that a generator reading only application/json (openapi-zod-client's default) types problems,
 * and the service answers in the one the client asked for. The helper checks each answer against
 * the contract as well.
 */
import t from 'tap'
import { bearer, build } from '../helper.ts'

const grace = bearer(2, 'orders:read')

t.test("a problem's media type follows Accept", async (t) => {
  const app = await build(t)
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'application/problem+json'],
    ['*/*', 'application/problem+json'],
    ['application/json', 'application/json'],
    ['application/json;q=0.9', 'application/json'],
    ['application/json, application/problem+json', 'application/problem+json'],
    ['application/json, text/plain, */*', 'application/problem+json'],
    ['text/html', 'application/problem+json'],
  ]
  for (const [accept, expected] of cases) {
    const response = await app.inject({
      method: 'GET',
      url: '/api/v1/orders/999999',
      headers: { ...grace, ...(accept === undefined ? {} : { accept }) },
    })
    t.equal(response.statusCode, 404, `Accept: ${accept}`)
    t.equal(String(response.headers['content-type']).split(';')[0], expected, `Accept: ${accept}`)
    t.equal(response.json().code, 'NOT_FOUND')
  }
})
