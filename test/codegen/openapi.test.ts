// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * What codegen/openapi.ts derives from openapi.yaml that no library does for us: the operations
 * manifest and the component schemas, as the contract's own JSON Schema. And the drift check: a
 * stale or hand-edited generated file fails `npm run codegen -- --check`.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { banner } from '../../codegen/generated-file.ts'
import { generateOpenApiFiles, openApiFilesOf } from '../../codegen/openapi.ts'
import { operations } from '../../src/generated/openapi/operations.ts'
import { OrderCreateSchema, OrderItemInputSchema, OrderStatusSchema } from '../../src/generated/openapi/schemas.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const contract = parse(await readFile(join(root, 'openapi.yaml'), 'utf8')) as Record<string, any>

t.test('the generated files are the committed ones, bannered, and the same on every run', async (t) => {
  const files = await generateOpenApiFiles(root)
  t.same(
    files.map((file) => file.path),
    ['src/generated/openapi/schemas.ts', 'src/generated/openapi/operations.ts'],
  )
  for (const file of files) {
    t.ok(file.contents.startsWith(banner('codegen/openapi.ts', 'openapi.yaml')), `${file.path} starts with the banner`)
    t.equal(file.contents, await readFile(join(root, file.path), 'utf8'), `${file.path} is committed as generated`)
  }
  t.same(openApiFilesOf(parse(await readFile(join(root, 'openapi.yaml'), 'utf8'))), files, 'a second run is byte-identical')
})

t.test('component schemas are the contract`s own JSON Schema, a $ref being the shared constant', async (t) => {
  const { $ref: _, ...items } = contract.components.schemas.OrderCreate.properties.items
  t.same(OrderCreateSchema, {
    ...contract.components.schemas.OrderCreate,
    properties: { items: { ...items, items: contract.components.schemas.OrderItemInput } },
  })
  t.equal(OrderCreateSchema.properties.items.items, OrderItemInputSchema, 'one object per component, shared by reference')
  t.same(OrderStatusSchema, contract.components.schemas.OrderStatus, 'an enum stays an enum')
})

t.test('the manifest: method, URL, media types, body, authentication, scopes, defaults', async (t) => {
  const { schema, ...createOrder } = operations.createOrder
  t.same(createOrder, {
    operationId: 'createOrder',
    method: 'POST',
    path: '/orders',
    url: '/api/v1/orders',
    authenticated: true,
    // No credential in the query string: only the event stream takes one (its ticket).
    queryCredential: null,
    scopes: ['orders:write'],
    requestBodyRequired: true,
    requestMediaTypes: ['application/json'],
    queryDefaults: [],
  })
  t.equal(schema.body, OrderCreateSchema, 'the body is the component the contract names')
  t.same(schema.headers.properties['idempotency-key'], contract.components.parameters.IdempotencyKey.schema, 'header names in lower case')
  t.equal(schema.headers.additionalProperties, true, 'clients send headers the contract does not name')
  t.same(Object.keys(schema.response), ['201', '400', '401', '403', '406', '408', '409', '413', '415', '422', '429', '431', 'default'])
  t.equal(
    schema.response['400'].content['application/problem+json'].schema,
    operations.getOrder.schema.response['404'].content['application/problem+json'].schema,
  )

  t.same(operations.getOrder.schema.params, {
    type: 'object',
    properties: { id: contract.components.parameters.OrderId.schema },
    required: ['id'],
    additionalProperties: false,
  })
  t.equal(operations.getOrder.url, '/api/v1/orders/:id', 'the served base path from servers[0], Fastify placeholders')
  t.same(operations.listOrders.queryDefaults, ['sort', 'limit'])
  t.equal(operations.listOrders.schema.querystring.additionalProperties, false, 'unknown query parameters are errors')
  t.same(operations.updateOrder.requestMediaTypes, ['application/merge-patch+json', 'application/json'])
  t.equal(operations.payOrder.requestBodyRequired, false)
  t.same([operations.getOpenApiJson.authenticated, operations.getOpenApiJson.scopes], [false, []], 'security: [] means no credential')
  t.same(
    Object.keys(operations),
    Object.values(contract.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId)),
  )
})

t.test('codegen --check fails on a stale or hand-edited generated file, and passes on the committed ones', async (t) => {
  // A copy of what codegen reads and writes, inside the repository so that its imports resolve.
  const copy = await mkdtemp(join(root, 'test/codegen/.tmp-check-'))
  t.teardown(() => rm(copy, { recursive: true, force: true }))
  for (const path of ['codegen', 'openapi.yaml', 'schema.graphql', 'operations', 'src/generated'])
    await cp(join(root, path), join(copy, path), { recursive: true })
  const check = () =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', join(copy, 'codegen/index.ts'), '--check']).then(
      () => 'up to date',
      (error: { stderr: string }) => error.stderr,
    )
  t.equal(await check(), 'up to date')

  const operationsFile = join(copy, 'src/generated/openapi/operations.ts')
  const committed = await readFile(operationsFile, 'utf8')
  await writeFile(operationsFile, committed.replace('"url": "/api/v1/orders/:id"', '"url": "/api/v1/order/:id"'))
  t.match(await check(), /stale.*\n\s+src\/generated\/openapi\/operations\.ts/, 'a hand edit fails the check')
  await writeFile(operationsFile, committed)

  await writeFile(join(copy, 'openapi.yaml'), (await readFile(join(copy, 'openapi.yaml'), 'utf8')).replace('/orders/{id}:', '/order/{id}:'))
  t.match(await check(), /src\/generated\/openapi\/operations\.ts/, 'output the contract no longer produces fails the check')

  await writeFile(join(copy, 'src/generated/openapi/leftover.ts'), 'export {}\n')
  t.match(await check(), /leftover\.ts \(no longer generated\)/, 'a file no generator writes fails the check')
})
