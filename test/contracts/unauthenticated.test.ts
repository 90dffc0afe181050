/**
 * No request without a valid credential reaches a handler: every operation openapi.yaml protects
 * answers 401 without a token, read from the contract itself.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { build } from '../helper.ts'

interface Operation {
  operationId: string
  security?: unknown[]
  requestBody?: unknown
}

const document = parse(await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  servers: Array<{ url: string }>
  paths: Record<string, Record<string, Operation>>
}
const prefix = new URL(document.servers[0]!.url).pathname

t.test('every protected operation is 401 without a token, before its body is read', async (t) => {
  const app = await build(t)
  const before = await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  let protectedCount = 0
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const isPublic = Array.isArray(operation.security) && operation.security.length === 0
      const url = prefix + path.replace(/\{\w+\}/g, '1')
      const response = await app.inject({
        method: method.toUpperCase() as 'GET',
        url,
        ...(operation.requestBody
          ? { payload: { items: [{ sku: 'KB-101', qty: 1 }], title: 't', body: 'b', name: 'n', sku: 'X', price: 1 } }
          : {}),
      })
      if (isPublic) {
        t.equal(response.statusCode, 200, `${operation.operationId} is public`)
      } else {
        protectedCount++
        t.equal(response.statusCode, 401, `${operation.operationId} without a token`)
        t.match(response.headers['www-authenticate'], /^Bearer realm="api"$/, operation.operationId)
      }
    }
  }
  t.ok(protectedCount >= 24, `${protectedCount} protected operations walked`)
  const after = await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  t.equal(Number(after.n), Number(before.n), 'nothing was written')
})
