/**
 * codegen/openapi.ts against a fixture contract (fixtures/widgets/openapi.yaml) that uses every
 * construct the generator supports: the generated TypeBox code is written to a scratch directory,
 * imported, and checked with AJV (as the app validates), with Fastify itself (as the app routes and
 * serializes) and with the TypeScript compiler; plus determinism and the refusals.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import Fastify from 'fastify'
import ts from 'typescript'
import { parse } from 'yaml'
import {
  OPENAPI_OUTPUT,
  OpenApiCodegenError,
  generateOpenApiFiles,
  generateOpenApiFilesFromDocument,
  generateOpenApiFilesFromSource,
} from '../../codegen/openapi.ts'
import { banner } from '../../codegen/generated-file.ts'

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv

const here = dirname(fileURLToPath(import.meta.url))
const fixtureRoot = join(here, 'fixtures/widgets')
const fixturePath = join(fixtureRoot, 'openapi.yaml')
const fixtureSource = await readFile(fixturePath, 'utf8')

type Json = Record<string, any>
type Schema = Json

/** The generated modules, written under test/codegen/ so that their imports resolve against the repo's node_modules. */
async function writeGenerated(t: Teardown): Promise<{ dir: string; schemas: Json; operations: Json }> {
  const dir = join(here, `.tmp-${randomBytes(6).toString('hex')}`)
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  for (const file of await generateOpenApiFiles(fixtureRoot)) {
    const path = join(dir, file.path)
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, file.contents)
  }
  const schemas = (await import(pathToFileURL(join(dir, OPENAPI_OUTPUT.schemas)).href)) as Json
  const operations = (await import(pathToFileURL(join(dir, OPENAPI_OUTPUT.operations)).href)) as Json
  return { dir, schemas, operations }
}

interface Teardown {
  teardown(fn: () => unknown): void
}

function fixture(): Json {
  return parse(fixtureSource) as Json
}

function ajv(coerceTypes: boolean): Ajv {
  const instance = new Ajv({ allErrors: true, strict: false, useDefaults: true, removeAdditional: false, coerceTypes })
  addFormats(instance)
  return instance
}

const widget = {
  id: 1,
  name: "Sprocket O'Neil",
  status: 'active',
  tags: ['small', 'blue'],
  price: 12.5,
  quantity: 10,
  owner: { id: 2, email: 'ann@example.com', nickname: 'extra properties allowed here' },
  note: null,
  parent_id: 3,
  kind: 'widget',
  color: 'red',
  shape: { kind: 'circle', radius: 2 },
  dimensions: { width: 2, height: 0 },
  metadata: { anything: [1, 'two', { three: 3 }] },
  created_at: '2026-01-05T09:00:00.000Z',
}

t.test('generated files: paths, banner, determinism, entry points', async (t) => {
  const files = await generateOpenApiFiles(fixtureRoot)
  t.same(
    files.map((file) => file.path),
    ['src/generated/openapi/schemas.ts', 'src/generated/openapi/operations.ts'],
  )
  for (const file of files) {
    t.ok(file.contents.startsWith(banner('codegen/openapi.ts', 'openapi.yaml')), `${file.path} starts with the banner`)
    t.ok(file.contents.endsWith('\n'), `${file.path} ends with a newline`)
    t.notMatch(file.contents, /\t| +$/m, `${file.path} has no tabs or trailing spaces`)
    t.notMatch(file.contents, /examples|description|deprecated|x-internal-note/, `${file.path} drops annotations`)
  }
  t.same(await generateOpenApiFiles(fixtureRoot), files, 'a second run is byte-identical')
  t.same(await generateOpenApiFiles(fixturePath), files, 'the document path works like its directory')
  t.same(await generateOpenApiFiles('/nonexistent', fixturePath), files, 'an explicit document path wins')
  t.same(generateOpenApiFilesFromSource(fixtureSource), files, 'the source text gives the same files')
  t.same(generateOpenApiFilesFromDocument(fixture()), files, 'the parsed document gives the same files')
  await t.rejects(generateOpenApiFiles(join(here, 'fixtures/missing')), { code: 'ENOENT' })

  const schemas = files[0]!.contents
  const order = ['NameSchema', 'StatusSchema', 'TagSchema', 'OwnerSchema', 'CircleSchema', 'SquareSchema', 'WidgetSchema']
  const positions = order.map((name) => schemas.indexOf(`export const ${name} =`))
  t.ok(
    positions.every((position) => position > 0),
    'every component schema is declared',
  )
  t.same(
    [...positions].sort((a, b) => a - b),
    positions,
    'dependencies are declared before the schemas that use them',
  )
  t.match(schemas, 'note: Type.Union([Type.String({ maxLength: 10 }), Type.Null()]),', 'a nullable type array becomes a union with null')
  t.match(schemas, "export const StatusSchema = Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('archived')])")
  t.match(schemas, 'export type Widget = Static<typeof WidgetSchema>')
})

t.test('component schemas validate like the contract', async (t) => {
  const { schemas } = await writeGenerated(t)
  const validator = ajv(false)
  const valid = (schema: Schema, value: unknown) => validator.validate(schema, structuredClone(value))
  const Widget = schemas.WidgetSchema as Schema

  t.ok(valid(Widget, widget), 'a complete widget is valid')
  t.ok(
    valid(Widget, { ...widget, note: 'short', parent_id: null, color: 255, shape: { kind: 'square', side: 1 } }),
    'other valid alternatives',
  )
  const withoutOptional = Object.fromEntries(
    Object.entries(widget).filter(([name]) => !['quantity', 'color', 'shape', 'dimensions', 'metadata'].includes(name)),
  )
  t.ok(valid(Widget, withoutOptional), 'optional properties may be left out')
  const defaulted = structuredClone(withoutOptional)
  validator.validate(Widget, defaulted)
  t.equal((defaulted as Json).quantity, 5, 'defaults are kept')

  const invalid: Array<[string, Json]> = [
    ['an unknown property', { ...widget, colour: 'red' }],
    ['a missing required property', Object.fromEntries(Object.entries(widget).filter(([name]) => name !== 'price'))],
    ['a missing required nullable property', Object.fromEntries(Object.entries(widget).filter(([name]) => name !== 'note'))],
    ['a wrong type', { ...widget, price: '12.5' }],
    ['a float for an integer', { ...widget, id: 1.5 }],
    ['null where not nullable', { ...widget, name: null }],
    ['null inside a non-nullable ref', { ...widget, owner: null }],
    ['a number above maximum', { ...widget, id: 2147483648 }],
    ['a number below minimum', { ...widget, id: 0 }],
    ['exclusiveMinimum is exclusive', { ...widget, price: 0 }],
    ['exclusiveMaximum is exclusive', { ...widget, quantity: 100 }],
    ['multipleOf', { ...widget, quantity: 7 }],
    ['a bad enum value', { ...widget, status: 'deleted' }],
    ['a bad const value', { ...widget, kind: 'gadget' }],
    ['too long a string', { ...widget, name: 'x'.repeat(51) }],
    ['too short a string', { ...widget, name: '' }],
    ['a pattern mismatch', { ...widget, name: '1abc' }],
    ['too long a nullable string', { ...widget, note: 'x'.repeat(11) }],
    ['a nullable integer below minimum', { ...widget, parent_id: 0 }],
    ['too many items', { ...widget, tags: ['a', 'b', 'c', 'd'] }],
    ['duplicate items', { ...widget, tags: ['a', 'a'] }],
    ['an item breaking its ref', { ...widget, tags: ['UPPER'] }],
    ['a format mismatch', { ...widget, created_at: 'yesterday' }],
    ['a format mismatch in a ref', { ...widget, owner: { id: 1, email: 'not an email' } }],
    ['no anyOf alternative', { ...widget, color: 'purple' }],
    ['an anyOf alternative out of range', { ...widget, color: 256 }],
    ['no oneOf alternative', { ...widget, shape: { kind: 'circle', side: 1 } }],
    ['a map value breaking additionalProperties', { ...widget, dimensions: { width: -1 } }],
    ['a map value of the wrong type', { ...widget, dimensions: { width: 'wide' } }],
    ['an array where an object belongs', { ...widget, metadata: [] }],
  ]
  for (const [what, value] of invalid) t.notOk(valid(Widget, value), `${what} is rejected`)

  t.notOk(valid(schemas.WidgetPatchSchema, {}), 'minProperties')
  t.ok(valid(schemas.WidgetPatchSchema, { note: null }), 'a nullable optional property')
  const created = { name: 'Bolt' }
  t.ok(validator.validate(schemas.WidgetCreateSchema, created))
  t.same(created, { name: 'Bolt', status: 'draft', tags: [] }, 'defaults of optional properties are applied')
  t.same(Object.keys(schemas).sort(), [
    'CircleSchema',
    'NameSchema',
    'OwnerSchema',
    'ProblemSchema',
    'SquareSchema',
    'StatusSchema',
    'TagSchema',
    'WidgetCreateSchema',
    'WidgetPatchSchema',
    'WidgetSchema',
  ])
  t.equal(Widget.additionalProperties, false)
  t.equal(Widget.properties.id.readOnly, true, 'readOnly is kept')
  t.notOk('$id' in Widget, 'no $id')
})

t.test('operations: metadata', async (t) => {
  const { operations: module } = await writeGenerated(t)
  const operations = module.operations as Json
  t.same(
    Object.keys(operations),
    ['listWidgets', 'createWidget', 'getWidget', 'updateWidget', 'deleteWidget', 'replaceWidgetNote', 'getHealth'],
    'document order',
  )
  const summary = Object.fromEntries(
    Object.values(operations).map((operation: Json) => [
      operation.operationId,
      [
        operation.method,
        operation.path,
        operation.url,
        operation.authenticated,
        operation.scopes,
        operation.successStatus,
        operation.requestBodyRequired,
        operation.requestMediaTypes,
      ],
    ]),
  )
  t.same(summary, {
    listWidgets: ['GET', '/widgets', '/api/v2/widgets', true, ['widgets:read'], 200, false, []],
    createWidget: ['POST', '/widgets', '/api/v2/widgets', true, ['widgets:write'], 201, true, ['application/json']],
    getWidget: ['GET', '/widgets/{id}', '/api/v2/widgets/:id', true, [], 200, false, []],
    updateWidget: [
      'PATCH',
      '/widgets/{id}',
      '/api/v2/widgets/:id',
      true,
      ['widgets:write', 'admin'],
      200,
      false,
      ['application/merge-patch+json', 'application/json'],
    ],
    deleteWidget: ['DELETE', '/widgets/{id}', '/api/v2/widgets/:id', true, [], 204, false, []],
    replaceWidgetNote: ['PUT', '/widgets/{id}/note', '/api/v2/widgets/:id/note', true, [], 204, false, ['application/json', 'text/plain']],
    getHealth: ['GET', '/health', '/api/v2/health', false, [], 200, false, []],
  })
  t.same(operations.listWidgets.tags, ['widgets'])
  t.same(operations.getHealth.tags, ['meta'])
})

t.test('operations: route schemas', async (t) => {
  const { schemas, operations: module } = await writeGenerated(t)
  const operations = module.operations as Json
  const parameters = ajv(true)
  const bodies = ajv(false)

  // Query: defaults, coercion, required, unknown parameters rejected.
  const list = operations.listWidgets.schema
  t.same(Object.keys(list).sort(), ['headers', 'querystring', 'response'])
  const query: Json = { q: 'ab' }
  t.ok(parameters.validate(list.querystring, query))
  t.same(query, { q: 'ab', limit: 10 }, 'query defaults are applied')
  t.ok(parameters.validate(list.querystring, { q: 'ab', limit: '50', status: 'draft' }), 'query values are coerced')
  t.notOk(parameters.validate(list.querystring, { q: 'ab', limit: '51' }), 'query maximum')
  t.notOk(parameters.validate(list.querystring, { q: 'ab', status: 'gone' }), 'a query enum via $ref')
  t.notOk(parameters.validate(list.querystring, { limit: 5 }), 'a required query parameter')
  t.notOk(parameters.validate(list.querystring, { q: 'ab', page: 2 }), 'an unknown query parameter')
  t.equal(list.querystring.additionalProperties, false)

  // Headers: lower-case names, others allowed.
  t.same(Object.keys(list.headers.properties), ['x-request-id'])
  t.equal(list.headers.additionalProperties, true)
  t.ok(parameters.validate(list.headers, { 'x-request-id': '0b5f9e1e-2f5c-4a43-9a37-5d3f1f0c2a11', 'user-agent': 'tap' }))
  t.notOk(parameters.validate(list.headers, { 'x-request-id': 'nope' }), 'header format')
  t.notOk(parameters.validate(list.headers, { 'user-agent': 'tap' }), 'a required header')
  t.same(Object.keys(operations.getWidget.schema.headers.properties), ['if-none-match'], 'Authorization is not a header parameter')
  t.same(Object.keys(operations.updateWidget.schema.headers.properties), ['if-match'], 'a $ref chain to a parameter is followed')

  // Path parameters, also from the path item.
  const get = operations.getWidget.schema
  t.ok(parameters.validate(get.params, { id: '7' }))
  t.notOk(parameters.validate(get.params, { id: '0' }))
  t.notOk(parameters.validate(get.params, { id: 'x' }))
  t.same(get.params.required, ['id'])

  // Bodies: one JSON media type is the schema itself; several use the content form.
  const create = operations.createWidget.schema
  t.equal(create.body, schemas.WidgetCreateSchema, 'a $ref body is the component constant')
  t.ok(bodies.validate(create.body, { name: 'Bolt' }))
  t.notOk(bodies.validate(create.body, { name: 'Bolt', price: 3 }), 'an unknown body property')
  t.notOk(bodies.validate(create.body, { name: 5 }), 'a wrong body type')
  t.notOk(bodies.validate(create.body, { name: null }), 'null in the body where not nullable')
  t.notOk(bodies.validate(create.body, { name: 'Bolt', status: 'archived' }), 'an enum narrower than the component')
  t.same(Object.keys(operations.updateWidget.schema.body.content), ['application/merge-patch+json', 'application/json'])
  t.equal(operations.updateWidget.schema.body.content['application/json'].schema, schemas.WidgetPatchSchema)
  const note = operations.replaceWidgetNote.schema.body.content
  t.equal(note['text/plain'].schema.type, 'string', 'each media type keeps its own schema')
  t.equal(note['application/json'].schema.type, 'object')

  // Responses: content per media type; no content, no entry; default and ranges kept.
  t.same(Object.keys(list.response), ['200', '400', 'default'], '304 (no content) is left out')
  t.same(Object.keys(create.response), ['201', '400', '4xx'], "202 (no content) is left out; 4XX is Fastify's 4xx")
  t.equal(create.response['201'].content['application/json'].schema, schemas.WidgetSchema)
  t.equal(list.response['400'].content['application/problem+json'].schema, schemas.ProblemSchema)
  t.same(Object.keys(operations.deleteWidget.schema.response), ['404'], '204 is left out')
  t.notOk('response' in operations.replaceWidgetNote.schema, 'no response schema when no response has content')
  t.same(Object.keys(operations.getHealth.schema.response['200'].content), ['application/json', 'application/health+json', 'text/plain'])
  t.same(
    operations.getHealth.schema.response['200'].content['application/health+json'].schema.required,
    ['status'],
    'an inline schema in the content map',
  )
  t.ok(bodies.validate(list.response['200'].content['application/json'].schema, { data: [widget], next: null }))
  t.notOk(bodies.validate(list.response['200'].content['application/json'].schema, { data: [widget] }), 'a required nullable property')

  // The exported part schemas are the ones in the route schema.
  t.equal(module.ListWidgetsQuerySchema, list.querystring)
  t.equal(module.GetWidgetParamsSchema, get.params)
  t.equal(module.CreateWidgetBodySchema, create.body)
  t.equal(module.ListWidgetsResponse200Schema, list.response['200'].content['application/json'].schema)
})

t.test('operations: Fastify accepts the route schemas, validates with them and serializes with them', async (t) => {
  const { operations: module } = await writeGenerated(t)
  const operations = module.operations as Json
  const app = Fastify({
    ajv: { customOptions: { strict: false, removeAdditional: false, allErrors: true, coerceTypes: 'array', useDefaults: true } },
  })
  t.teardown(() => app.close())
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
  const stored = { ...widget, secret: 'never serialized' }
  const handlers: Json = {
    listWidgets: async (request: any) => ({ data: [stored], next: null, query: request.query }),
    createWidget: async (request: any, reply: any) => reply.code(201).send({ ...stored, name: request.body.name }),
    getWidget: async (request: any, reply: any) =>
      request.params.id === 404
        ? reply.code(404).type('application/problem+json').send({ status: 404, code: 'NOT_FOUND', secret: 'x' })
        : stored,
    updateWidget: async (request: any) => ({ ...stored, ...request.body }),
    deleteWidget: async (_request: any, reply: any) => reply.code(204).send(),
    replaceWidgetNote: async (_request: any, reply: any) => reply.code(204).send(),
    getHealth: async () => ({ status: 'ok', checks: { db: true } }),
  }
  for (const operation of Object.values(operations) as Json[]) {
    app.route({ method: operation.method, url: operation.url, schema: operation.schema, handler: handlers[operation.operationId] })
  }
  await app.ready()

  const requestId = { 'x-request-id': '0b5f9e1e-2f5c-4a43-9a37-5d3f1f0c2a11' }
  const list = await app.inject({ method: 'GET', url: '/api/v2/widgets?q=ab', headers: requestId })
  t.equal(list.statusCode, 200)
  t.same(Object.keys(list.json()), ['data', 'next'], 'properties outside the response schema are not serialized')
  t.notOk('secret' in list.json().data[0], 'nor inside referenced schemas')
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v2/widgets?q=ab&page=2', headers: requestId })).statusCode,
    400,
    'unknown query parameter',
  )
  t.equal((await app.inject({ method: 'GET', url: '/api/v2/widgets?q=ab' })).statusCode, 400, 'missing required header')

  const created = await app.inject({ method: 'POST', url: '/api/v2/widgets', payload: { name: 'Bolt' } })
  t.equal(created.statusCode, 201)
  t.equal(created.json().name, 'Bolt')
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/widgets', payload: { name: 'Bolt', extra: 1 } })).statusCode, 400)

  const missing = await app.inject({ method: 'GET', url: '/api/v2/widgets/404' })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { status: 404, code: 'NOT_FOUND' }, 'problem+json is serialized with the problem schema')
  t.equal((await app.inject({ method: 'GET', url: '/api/v2/widgets/0' })).statusCode, 400, 'path parameter minimum')

  const patch = (contentType: string, payload: string) =>
    app.inject({ method: 'PATCH', url: '/api/v2/widgets/1', headers: { 'content-type': contentType }, payload })
  t.equal((await patch('application/merge-patch+json', '{"note":"hi"}')).json().note, 'hi')
  t.equal((await patch('application/json', '{"note":null}')).statusCode, 200)
  t.equal((await patch('application/merge-patch+json', '{}')).statusCode, 400, 'the merge-patch schema applies (minProperties)')
  t.equal((await patch('application/json', '{"status":"gone"}')).statusCode, 400, 'the JSON schema applies')

  const note = (contentType: string, payload: string) =>
    app.inject({ method: 'PUT', url: '/api/v2/widgets/1/note', headers: { 'content-type': contentType }, payload })
  t.equal((await note('text/plain', 'short')).statusCode, 204)
  t.equal((await note('text/plain', 'x'.repeat(141))).statusCode, 400)
  t.equal((await note('application/json', '{"text":"short"}')).statusCode, 204)
  t.equal((await note('application/json', '"short"')).statusCode, 400, 'JSON bodies use the JSON schema')

  t.equal((await app.inject({ method: 'DELETE', url: '/api/v2/widgets/1' })).statusCode, 204)
  t.same((await app.inject({ method: 'GET', url: '/api/v2/health' })).json(), { status: 'ok', checks: { db: true } })
})

t.test('the generated code type-checks, and its static types are the contract', async (t) => {
  const { dir } = await writeGenerated(t)
  const usage = join(dir, 'usage.ts')
  await writeFile(
    usage,
    `import type { Widget, WidgetPatch } from './src/generated/openapi/schemas.ts'
import type { CreateWidgetBody, GetWidgetParams, ListWidgetsHeaders, ListWidgetsQuery, ListWidgetsResponse200, OperationId, ReplaceWidgetNoteBody, UpdateWidgetBody } from './src/generated/openapi/operations.ts'
import { operations } from './src/generated/openapi/operations.ts'

const widget: Widget = ${JSON.stringify(Object.fromEntries(Object.entries(widget).filter(([name]) => name !== 'owner')))} as unknown as Widget
export const note: string | null = widget.note
export const parent: number | null = widget.parent_id
export const quantity: number | undefined = widget.quantity
export const status: 'draft' | 'active' | 'archived' = widget.status
export const color: 'red' | 'green' | 'blue' | number | undefined = widget.color
export const width: number | undefined = widget.dimensions?.width
// @ts-expect-error not nullable
export const name: string = null as Widget['note']
// @ts-expect-error not in the enum
export const badStatus: Widget['status'] = 'deleted'
export const patch: WidgetPatch = { note: null }
export const body: CreateWidgetBody = { name: 'x' }
export const patchBody: UpdateWidgetBody = { name: 'x' }
export const noteBody: ReplaceWidgetNoteBody[] = ['text', { text: 'text' }]
export const params: GetWidgetParams = { id: 1 }
export const query: ListWidgetsQuery = { q: 'ab' }
export const headers: ListWidgetsHeaders = { 'x-request-id': 'id' }
export const page: ListWidgetsResponse200 = { data: [], next: null }
export const id: OperationId = 'getHealth'
export const method: 'PATCH' = operations.updateWidget.method
export const url: '/api/v2/widgets/:id' = operations.getWidget.url
`,
  )
  const program = ts.createProgram([usage], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    noUnusedLocals: true,
    verbatimModuleSyntax: true,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file
      ? `${diagnostic.file.fileName.slice(dir.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
      : ''
    return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
  })
  t.same(diagnostics, [], 'no type errors')
})

t.test('what the generator refuses, with the place in the document', async (t) => {
  const refuses = (what: string, change: (document: Json) => void, message: RegExp) => {
    const document = fixture()
    change(document)
    t.throws(() => generateOpenApiFilesFromDocument(document), message, what)
    try {
      generateOpenApiFilesFromDocument(document)
    } catch (error) {
      t.ok(error instanceof OpenApiCodegenError, `${what}: an OpenApiCodegenError`)
    }
  }
  const schemas = (document: Json) => document.components.schemas

  refuses(
    'an unsupported keyword',
    (d) => (schemas(d).Widget.properties.name = { allOf: [{ $ref: '#/components/schemas/Name' }] }),
    /components\.schemas\.Widget\.properties\.name: unsupported JSON Schema keyword "allOf"/,
  )
  refuses(
    'an OpenAPI 3.0 nullable',
    (d) => (schemas(d).Owner.properties.email.nullable = true),
    /Owner\.properties\.email: unsupported JSON Schema keyword "nullable"/,
  )
  refuses(
    'patternProperties',
    (d) => (schemas(d).Owner.patternProperties = { '^x-': {} }),
    /unsupported JSON Schema keyword "patternProperties"/,
  )
  refuses('a not', (d) => (schemas(d).Tag.not = { const: 'x' }), /components\.schemas\.Tag: unsupported JSON Schema keyword "not"/)
  refuses(
    'a keyword in an operation schema',
    (d) => (d.paths['/widgets'].get.parameters[2].schema.if = {}),
    /paths\.\/widgets\.get\.parameters\[2\]\.schema: unsupported JSON Schema keyword "if"/,
  )
  refuses(
    'a keyword in a referenced parameter',
    (d) => (d.components.parameters.Limit.schema.contains = {}),
    /components\.parameters\.Limit\.schema: unsupported JSON Schema keyword "contains"/,
  )
  refuses(
    'a cycle',
    (d) => (schemas(d).Owner.properties.favourite = { $ref: '#/components/schemas/Widget' }),
    /cycle \(Widget → Owner → Widget\)/,
  )
  refuses('a self-reference', (d) => (schemas(d).Owner.properties.boss = { $ref: '#/components/schemas/Owner' }), /cycle \(Owner → Owner\)/)
  refuses(
    'a $ref to a missing schema',
    (d) => (schemas(d).Owner.properties.team = { $ref: '#/components/schemas/Team' }),
    /\$ref to unknown schema #\/components\/schemas\/Team/,
  )
  refuses(
    'a $ref outside components.schemas',
    (d) => (schemas(d).Owner.properties.team = { $ref: '#/components/parameters/Limit' }),
    /only #\/components\/schemas\/<Name> refs/,
  )
  refuses(
    'keywords next to $ref',
    (d) => (schemas(d).Widget.properties.name = { $ref: '#/components/schemas/Name', default: 'x' }),
    /keywords next to "\$ref" are not supported \(default\)/,
  )
  refuses('a keyword for another type', (d) => (schemas(d).Owner.properties.id.maxLength = 3), /"maxLength" does not apply to type integer/)
  refuses('a keyword without a type', (d) => (schemas(d).Widget.properties.kind = { minimum: 3 }), /"minimum" needs a "type"/)
  refuses(
    'an OpenAPI 3.0 boolean exclusiveMinimum',
    (d) => (schemas(d).Circle.properties.radius.exclusiveMinimum = true),
    /OpenAPI 3\.0 boolean/,
  )
  refuses('an invalid pattern', (d) => (schemas(d).Tag.pattern = '(['), /"pattern" is not a valid regular expression/)
  refuses('minimum above maximum', (d) => (schemas(d).Owner.properties.id.maximum = 0), /"minimum" \(1\) is greater than "maximum" \(0\)/)
  refuses(
    'a required property that does not exist',
    (d) => schemas(d).Circle.required.push('diameter'),
    /required property "diameter" is not in "properties"/,
  )
  refuses('an enum value of the wrong type', (d) => schemas(d).Status.enum.push(3), /enum value 3 is not of type string/)
  refuses('an object enum value', (d) => (schemas(d).Status = { enum: [{ a: 1 }] }), /only string, number, boolean and null enum values/)
  refuses('an array without items', (d) => delete schemas(d).Widget.properties.tags.items, /an array needs "items"/)
  refuses('tuple items', (d) => (schemas(d).Widget.properties.tags.items = [{ type: 'string' }]), /tuple "items"/)
  refuses('an unknown type', (d) => (schemas(d).Tag.type = 'text'), /unsupported type "text"/)
  refuses('an OpenAPI 3.0 document', (d) => (d.openapi = '3.0.3'), /OpenAPI 3\.1\.x/)
  refuses(
    'a component name that is not an identifier',
    (d) => (schemas(d)['Widget.Summary'] = { type: 'string' }),
    /must be a valid identifier/,
  )
  refuses(
    'an undescribed path parameter',
    (d) => (d.paths['/widgets/{id}/note'].put.parameters = []),
    /path parameter \{id\} is not described/,
  )
  refuses(
    'a path parameter not in the path',
    (d) => d.paths['/widgets'].get.parameters.push({ $ref: '#/components/parameters/WidgetId' }),
    /path parameter "id" does not appear in \/widgets/,
  )
  refuses(
    'an optional path parameter',
    (d) => (d.components.parameters.WidgetId.required = false),
    /a path parameter must be required: true/,
  )
  refuses(
    'a cookie parameter',
    (d) => (d.paths['/health'].get.parameters = [{ name: 'session', in: 'cookie', schema: { type: 'string' } }]),
    /cookie parameters are not supported/,
  )
  refuses(
    'a content parameter',
    (d) => (d.paths['/health'].get.parameters = [{ name: 'filter', in: 'query', content: { 'application/json': {} } }]),
    /parameters described by "content"/,
  )
  refuses(
    'a deepObject parameter',
    (d) => (d.paths['/health'].get.parameters = [{ name: 'filter', in: 'query', style: 'deepObject', schema: { type: 'object' } }]),
    /style "deepObject" is not supported/,
  )
  refuses(
    'a parameter listed twice',
    (d) => d.paths['/widgets'].get.parameters.push({ $ref: '#/components/parameters/Limit' }),
    /query parameter "limit" is listed twice/,
  )
  refuses(
    'a dangling $ref',
    (d) => (d.paths['/widgets/{id}'].get.responses['404'] = { $ref: '#/components/responses/Gone' }),
    /\$ref #\/components\/responses\/Gone does not resolve/,
  )
  refuses('a $ref loop', (d) => (d.components.responses.Error = { $ref: '#/components/responses/NotFound' }), /refers to itself/)
  refuses('an external $ref', (d) => (d.paths['/widgets/{id}'].get.responses['404'] = { $ref: 'other.yaml#/x' }), /only local \$refs/)
  refuses(
    'a dangling response header $ref',
    (d) => (d.components.responses.Error.headers = { ETag: { $ref: '#/components/headers/Nope' } }),
    /#\/components\/headers\/Nope does not resolve/,
  )
  refuses(
    'a media type without a schema',
    (d) => (d.components.requestBodies.WidgetPatch.content['application/json'] = {}),
    /a request media type needs a schema/,
  )
  refuses('a bad status', (d) => (d.paths['/health'].get.responses['2000'] = { description: 'x' }), /"2000" is not a response status/)
  refuses('a duplicate operationId', (d) => (d.paths['/health'].get.operationId = 'getWidget'), /operationId getWidget is used twice/)
  refuses('a missing operationId', (d) => delete d.paths['/health'].get.operationId, /needs an operationId/)
  refuses('a typo in an operation', (d) => (d.paths['/health'].get.reponses = {}), /unsupported operation field "reponses"/)
  refuses(
    'scopes that disagree',
    (d) => (d.paths['/widgets'].get['x-required-scopes'] = ['admin']),
    /x-required-scopes \(admin\) disagrees/,
  )
  refuses(
    'scopes without a credential',
    (d) => (d.paths['/health'].get['x-required-scopes'] = ['admin']),
    /scopes are listed but the operation needs no credential/,
  )
  refuses('an unknown security scheme', (d) => (d.paths['/health'].get.security = [{ apiKey: [] }]), /unknown security scheme "apiKey"/)
  refuses(
    'alternative requirements',
    (d) => (d.security = [{ bearerAuth: [] }, { bearerAuth: ['admin'] }]),
    /alternative security requirements/,
  )
  refuses('a server variable', (d) => (d.servers = [{ url: 'https://{host}/api' }]), /server variables are not supported/)
  refuses(
    'two routes Fastify cannot tell apart',
    (d) =>
      (d.paths['/widgets/{key}'] = {
        parameters: [{ name: 'key', in: 'path', required: true, schema: { type: 'string' } }],
        get: { operationId: 'getByKey', responses: { '200': { description: 'x' } } },
      }),
    /the same route as getWidget/,
  )

  t.throws(
    () => generateOpenApiFilesFromSource('openapi: 3.1.0\nopenapi: 3.1.0\n', 'dup.yaml'),
    /dup\.yaml: not valid YAML/,
    'invalid YAML names the file',
  )
  t.throws(
    () =>
      generateOpenApiFilesFromSource(
        fixtureSource.replace('exclusiveMaximum: 100', 'exclusiveMaximum: 100\n          dependentRequired: {}'),
        'openapi.yaml',
      ),
    /^openapi\.yaml: components\.schemas\.Widget\.properties\.quantity: unsupported JSON Schema keyword "dependentRequired"$/,
    'the message names the file and the place',
  )
})

t.test('security: global, operation-level, optional', async (t) => {
  const entry = (change: (document: Json) => void, id: string) => {
    const document = fixture()
    change(document)
    const operations = generateOpenApiFilesFromDocument(document)[1]!.contents
    const start = operations.indexOf(`  ${id}: {`)
    return operations.slice(start, operations.indexOf('\n  },', start))
  }
  t.match(
    entry(() => {}, 'getWidget'),
    /authenticated: true,\n\s+scopes: \[\],/,
    'the global requirement applies',
  )
  const globalAdmin = (d: Json) => {
    d.security = [{ bearerAuth: ['admin'] }]
    delete d.paths['/widgets'].post['x-required-scopes']
  }
  t.match(entry(globalAdmin, 'getWidget'), /authenticated: true,\n\s+scopes: \['admin'\],/, 'with its scopes')
  t.match(entry(globalAdmin, 'listWidgets'), /scopes: \['widgets:read'\],/, 'an operation-level requirement replaces the global one')
  const noGlobal = (d: Json) => {
    delete d.security
    delete d.paths['/widgets'].post['x-required-scopes']
  }
  t.match(entry(noGlobal, 'getWidget'), /authenticated: false,\n\s+scopes: \[\],/, 'no requirement anywhere: no credential')
  t.match(
    entry((d) => (d.paths['/widgets/{id}'].get.security = [{}, { bearerAuth: [] }]), 'getWidget'),
    /authenticated: false,/,
    'an empty requirement makes the credential optional',
  )
  t.match(
    entry((d) => (d.paths['/widgets'].get['x-required-scopes'] = ['widgets:read']), 'listWidgets'),
    /scopes: \['widgets:read'\],/,
    'x-required-scopes may repeat the requirement',
  )
  t.match(
    entry(() => {}, 'getHealth'),
    /authenticated: false,/,
    'security: [] overrides the global requirement',
  )
})
