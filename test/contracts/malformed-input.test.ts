/**
 * Property-based: random and malformed bodies, query strings, path ids, cursors and headers sent
 * to every operation of openapi.yaml never produce a 5xx, and every answer is one the contract
 * documents (a non-2xx is always a problem+json the contract lists).
 */
import t from 'tap'
import fc from 'fast-check'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { contractViolations } from '../contract-validator.ts'
import { build, tokenFor } from '../helper.ts'

const document = parse(await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  servers: Array<{ url: string }>
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: Record<string, unknown> }> }>>
}
const prefix = new URL(document.servers[0]!.url).pathname
// An event stream (text/event-stream) that accepts its input stays open by design, so inject would
// never return: its refusals are tested in test/modules/events/event-stream-rules.test.ts.
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([, operation]) => !operation.responses['200']?.content?.['text/event-stream'])
    .map(([method, operation]) => ({ path, method: method.toUpperCase(), id: operation.operationId })),
)

const printable = fc.string({
  unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~'.split('')),
  maxLength: 40,
})
const pathId = fc.oneof(
  fc.integer({ min: -5, max: 12 }).map(String),
  fc.constantFrom('0', '99999999999', '1e3', 'abc', '%20', '-1', '1.5', '00001'),
)
const queryValue = fc.oneof(
  printable,
  fc.integer().map(String),
  fc.constantFrom('-created_at', 'total', 'pending', 'id,total', '', 'x'.repeat(600)),
)
const queryKey = fc.constantFrom('limit', 'cursor', 'sort', 'status', 'fields', 'user_id', 'colour', 'limit[]')
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc
    .record({
      items: fc.array(
        fc.record({
          sku: fc.oneof(printable, fc.constantFrom('KB-101', 'MS-202')),
          qty: fc.oneof(fc.integer({ min: -2, max: 1200 }), printable as fc.Arbitrary<unknown>),
        }),
        { maxLength: 3 },
      ),
    })
    .map((value) => JSON.stringify(value)),
  fc
    .record(
      { title: printable, body: printable, reason: printable, name: printable, sku: printable, price: fc.integer() },
      { requiredKeys: [] },
    )
    .map((value) => JSON.stringify(value)),
  fc.constantFrom('{', '[]', 'null', '"text"', '{"items": [', '\u0000', ''),
)
const contentType = fc.constantFrom(
  'application/json',
  'application/merge-patch+json',
  'text/plain',
  'application/xml',
  'application/json; charset=utf-8',
)
const scopes = fc.constantFrom('', 'orders:read', 'orders:read orders:write articles:write', 'admin')

t.test('no input to any operation produces a 5xx or an undocumented answer', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '1000000' } })
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...operations),
      pathId,
      fc.array(fc.tuple(queryKey, queryValue), { maxLength: 3 }),
      fc.option(body, { nil: undefined }),
      contentType,
      fc.record({
        sub: fc.constantFrom(1, 2, 3),
        scope: scopes,
        key: fc.option(printable, { nil: undefined }),
        ifMatch: fc.option(printable, { nil: undefined }),
      }),
      async (operation, id, query, payload, type, caller) => {
        const search = new URLSearchParams(query).toString()
        const url = `${prefix}${operation.path.replace(/\{\w+\}/g, encodeURIComponent(id))}${search ? `?${search}` : ''}`
        const headers: Record<string, string> = { authorization: `Bearer ${tokenFor(caller.sub, caller.scope)}` }
        if (caller.key !== undefined) headers['idempotency-key'] = caller.key
        if (caller.ifMatch !== undefined) headers['if-match'] = caller.ifMatch
        if (payload !== undefined) headers['content-type'] = type
        const response = await app.inject({
          method: operation.method as 'GET',
          url,
          headers,
          ...(payload !== undefined ? { payload } : {}),
        })
        if (response.statusCode >= 500) throw new Error(`${operation.id} ${url}: ${response.statusCode} ${response.body}`)
        const violations = contractViolations({
          method: operation.method,
          url,
          statusCode: response.statusCode,
          headers: response.headers,
          body: response.body,
        })
        // A path id the router cannot match at all (e.g. an empty segment) is answered by the 404 handler.
        const unrouted = response.statusCode === 404 && violations.some((v) => v.includes('is not an operation'))
        if (violations.length > 0 && !unrouted) throw new Error(`${operation.id} ${url}: ${violations.join('; ')}`)
        if (response.statusCode >= 400 && !String(response.headers['content-type']).startsWith('application/problem+json')) {
          throw new Error(`${operation.id} ${url}: ${response.statusCode} is not problem+json`)
        }
      },
    ),
    { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? 20261122) },
  )
  t.pass('400 random requests, none answered with a 5xx or outside the contract')
})
