// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * Validators and serializers are compiled on first use, not at start (start-up time).
 * So that a schema that cannot compile is still found before a client finds it, this compiles
 * every request schema and every response schema of every operation, with the service's own
 * compilers, and checks that a lazily compiled validator answers as an eager one does.
 */
import t from 'tap'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { operations } from '../../src/generated/openapi/operations.ts'
import { createValidatorCompiler } from '../../src/contract/validation.ts'
import { fullVariants, lazySerializerFactory } from '../../src/http/lazy-serializers.ts'
import { OrderPageSchema, OrderSchema } from '../../src/generated/openapi/schemas.ts'
import { createCommandValidator } from '../../src/contract/command-validation.ts'

const PARTS = ['params', 'querystring', 'headers', 'body'] as const

t.test('every request schema of every operation compiles, and a lazy validator answers on its first call', async (t) => {
  const compiler = createValidatorCompiler()
  let compiled = 0
  for (const operation of Object.values(operations)) {
    const schema = operation.schema as Partial<Record<(typeof PARTS)[number], object>>
    for (const httpPart of PARTS) {
      const part = schema[httpPart]
      if (!part) continue
      const validate = compiler({ schema: part, httpPart, method: operation.method, url: operation.url }) as (data: unknown) => {
        value?: unknown
        error?: unknown
      }
      // The first call compiles; a value of the wrong shape must come back as errors, not a throw.
      t.doesNotThrow(() => validate(httpPart === 'body' ? 42 : {}), `${operation.operationId} ${httpPart}`)
      compiled++
    }
  }
  t.ok(compiled > 40, `${compiled} request schemas`)
})

t.test('every response schema compiles with the lazy serializer and serializes as the eager one does', async (t) => {
  const lazy = lazySerializerFactory()(undefined as never, undefined as never)
  const eager = SerializerSelector()(undefined as never, undefined as never)
  const problem = {
    type: '/problems/not-found',
    title: 'Not Found',
    status: 404,
    code: 'NOT_FOUND',
    detail: 'Order 9 was not found.',
    instance: '/api/v1/orders/9',
    extra: 'dropped',
  }
  let compiled = 0
  for (const operation of Object.values(operations)) {
    const responses = (operation.schema as { response?: Record<string, { content: Record<string, { schema: object }> }> }).response ?? {}
    for (const [httpStatus, response] of Object.entries(responses)) {
      for (const [contentType, { schema }] of Object.entries(response.content)) {
        const route = { schema, method: operation.method, url: operation.url, httpStatus, contentType }
        const serialize = lazy(route as never) as (data: unknown) => string
        if (contentType === 'application/problem+json') {
          t.equal(
            serialize(problem),
            (eager(route as never) as (data: unknown) => string)(problem),
            `${operation.operationId} ${httpStatus}`,
          )
        } else {
          t.doesNotThrow(() => eager(route as never), `${operation.operationId} ${httpStatus} compiles`)
        }
        compiled++
      }
    }
  }
  t.ok(compiled > 100, `${compiled} response schemas`)
})

t.test("full records are serialized with the record's schema, not the contract's oneOf of full and sparse", async (t) => {
  const fullVariant = fullVariants()
  const page = fullVariant(OrderPageSchema)
  t.equal(page.properties.data.items, OrderSchema, "a page's records are the full Order: no oneOf for fast-json-stringify to validate")
  t.equal(OrderPageSchema.properties.data.items.oneOf.length, 2, 'the contract schema itself is left as it is')
  t.equal(fullVariant(OrderSchema), OrderSchema, 'a schema with no such oneOf comes back as it was')

  const lazy = lazySerializerFactory()(undefined as never, undefined as never)
  const eager = SerializerSelector()(undefined as never, undefined as never)
  const route = { schema: OrderPageSchema, method: 'GET', url: '/api/v1/orders', httpStatus: '200', contentType: 'application/json' }
  const body = {
    data: [
      {
        id: 8,
        status: 'pending',
        total: 19000,
        items: [{ sku: 'KB-101', qty: 2, unit_price: 8900 }],
        user_id: 2,
        created_at: '2026-01-05T09:00:00.000Z',
        updated_at: '2026-01-05T09:00:00.000Z',
      },
    ],
    page: { next: null, cursor: null, total: 1 },
  }
  const serialized = (lazy(route as never) as (data: unknown) => string)(body)
  t.same(JSON.parse(serialized), body)
  t.equal(serialized, (eager(route as never) as (data: unknown) => string)(body), 'the same bytes as the contract schema gives')
})

t.test('path ids are checked as strings before any validator is compiled, exactly as before', async (t) => {
  const compiler = createValidatorCompiler()
  const getOrder = operations.getOrder.schema as { params: object }
  const validate = compiler({ schema: getOrder.params, httpPart: 'params', method: 'GET', url: '/api/v1/orders/:id' }) as (
    data: unknown,
  ) => { value?: unknown; error?: Array<{ keyword: string }> }
  t.equal(validate({ id: '0x10' }).error?.[0]?.keyword, 'recordId')
  t.same(validate({ id: '16' }), { value: { id: 16 } }, 'a canonical id is coerced by AJV')
})

t.test('every command schema compiles on its first check', async (t) => {
  const commands = createCommandValidator()
  for (const name of [
    'OrderCreate',
    'OrderItemsReplace',
    'OrderAction',
    'ProductCreate',
    'UserCreate',
    'ArticleCreate',
    'ArticleUpdate',
    'CommentCreate',
  ] as const) {
    t.throws(() => commands.check(name, 42), { code: 'VALIDATION_FAILED' }, name)
  }
})
