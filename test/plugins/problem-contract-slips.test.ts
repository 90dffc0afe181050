/**
 * Problems hold to their contract however odd the request: `instance` is a `format: uri-reference`
 * (characters a URI reference cannot hold are percent-encoded), and CURSOR_MISMATCH for `after`
 * with `cursor` names both parameters (docs/errors.md).
 */
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { contractViolations } from '../contract-validator.ts'
import { bearer, build } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write articles:write')

t.test("a problem's instance percent-encodes what a uri-reference cannot hold", async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  for (const [url, instance] of [
    ['/api/v1/orders/{x}', '/api/v1/orders/%7Bx%7D'],
    ['/api/v1/orders/a|b^c', '/api/v1/orders/a%7Cb%5Ec'],
    ['/api/v1/orders/[1]?q=`"<>', '/api/v1/orders/%5B1%5D?q=%60%22%3C%3E'],
    ['/api/v1/orders/%7Bx%7D', '/api/v1/orders/%7Bx%7D'],
    ['/api/v1/orders/x?a=b&c=d;e!$()*+,:@/?~', '/api/v1/orders/x?a=b&c=d;e!$()*+,:@/?~'],
  ] as const) {
    const response = await app.inject({ method: 'GET', url, headers: grace })
    t.equal(response.statusCode, 400, url)
    t.equal(response.json().instance, instance, `${url}: instance ${instance}`)
    t.same(
      contractViolations({ method: 'GET', url: '/api/v1/orders/1', ...response, body: response.body }),
      [],
      `${url}: as the contract says`,
    )
  }
})

t.test('over a real socket, the raw braces of GET /api/v1/orders/{x} are percent-encoded in instance', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  // node:http sends the path as given (fetch and inject would encode the braces themselves).
  const body = await new Promise<string>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/api/v1/orders/{x}', headers: grace }, (response) => {
      let text = ''
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => resolve(text)).on('error', reject)
    })
      .on('error', reject)
      .end()
  })
  t.equal(JSON.parse(body).instance, '/api/v1/orders/%7Bx%7D')
})

t.test('CURSOR_MISMATCH for after with a cursor names both parameters', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const response = await app.inject({ method: 'GET', url: '/api/v1/events?after=1&cursor=x', headers: grace })
  t.equal(response.statusCode, 400)
  t.equal(response.json().code, 'CURSOR_MISMATCH')
  t.same(
    response.json().errors.map((error: { in: string; name: string }) => [error.in, error.name]),
    [
      ['query', 'after'],
      ['query', 'cursor'],
    ],
  )
})
