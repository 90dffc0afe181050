// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * openapi.yaml serves SDK generators as docs/contracts.md says (decisions §16): clients generated
 * with @hey-api/openapi-ts, orval, openapi-typescript + openapi-fetch, swagger-typescript-api and
 * openapi-zod-client, each with its defaults, from the file on disk (no network), and for each a
 * program that reads `order.items` of a plain getOrder and of every order of listOrders pages,
 * pages on with `page.cursor`, creates an order, replays the create with its Idempotency-Key and
 * reads a problem's `code`, compiled under `tsc --strict`.
 *
 * A read that takes `fields` answers `Order | OrderSparse` (OpenAPI cannot tie an answer's schema
 * to a query parameter), so each program reads the plain answer through the one line
 * docs/contracts.md's table gives for its generator: the test takes that line from the table and
 * finds it in the program, the program compiles with no diagnostic, and the same reads without it
 * (the lines marked `// without the line`) are each an error, so the table says no more and no less
 * than the generators need.
 *
 * Generated once for the file and compiled in one program, to keep the test short. The clients
 * are written under node_modules/.cache so that their imports (openapi-fetch, zod, @zodios/core)
 * resolve to the project's packages.
 */
import t from 'tap'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { parse } from 'yaml'
import { createClient } from '@hey-api/openapi-ts'
import { generate } from 'orval'
import openapiTS, { astToString } from 'openapi-typescript'
import { generateApi } from 'swagger-typescript-api'
import { generateZodClientFromOpenAPI } from 'openapi-zod-client'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const contract = join(root, 'openapi.yaml')

/** The project's compiler settings (tsconfig.json), strict, with the DOM's fetch types the clients use. */
function typecheck(dir: string, files: string[]): Array<{ file: string; line: number; text: string }> {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    noEmit: true,
    skipLibCheck: true,
  })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ({
    file: diagnostic.file ? relative(dir, diagnostic.file.fileName) : '',
    line: diagnostic.file ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1 : 0,
    text: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
  }))
}

/** docs/contracts.md's table of generators: each generator's one line, as a code span of its row. */
async function documentedLines(): Promise<Map<string, string>> {
  const docs = await readFile(join(root, 'docs/contracts.md'), 'utf8')
  const rows = new Map<string, string>()
  for (const [, generator, line] of docs.matchAll(/^ *\| ([^|`]+?) \| `([^`]+)` \|/gm)) rows.set(generator!, line!)
  return rows
}

// Each program: the documented line, the reads through it, and the same reads without it.
const heyApiUsage = `
import { createClient } from './hey-api/client/index.js'
import { createOrder, getOrder, listOrders } from './hey-api/sdk.gen.js'
import type { Order, OrderSparse } from './hey-api/types.gen.js'

const client = createClient({ baseUrl: 'http://127.0.0.1:3000/api/v1', auth: () => 'a-token' })
const isOrder = (order: OrderSparse): order is Order => ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at'].every((field) => field in order)

export async function itemsOf(id: number): Promise<number> {
  const { data, error } = await getOrder({ client, path: { id } })
  if (error) throw new Error(error.code)
  if (!isOrder(data)) throw new Error('a sparse order')
  return data.items.length + data.total
}

export async function itemsWithoutTheLine(id: number): Promise<number> {
  const { data } = await getOrder({ client, path: { id }, throwOnError: true })
  return data.items.length // without the line
}

async function orderPage(cursor: string | null) {
  const { data, error } = await listOrders({ client, query: { limit: 20, ...(cursor ? { cursor } : {}) } })
  if (error) throw new Error(error.code)
  return data
}

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    if (!page.data.every(isOrder)) throw new Error('a sparse order')
    for (const order of page.data) count += order.items.length
    // The raw cursor of the next page: no URL to parse.
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function firstItemsWithoutTheLine(): Promise<number> {
  const { data: page } = await listOrders({ client, throwOnError: true })
  return page.data[0]?.items.length ?? 0 // without the line
}

export async function orderOnce(): Promise<boolean> {
  const create = () =>
    createOrder({ client, body: { items: [{ sku: 'KB-101', qty: 2 }] }, headers: { 'Idempotency-Key': 'sdk-check-1' } })
  const first = await create()
  const again = await create()
  if (first.error) throw new Error(first.error.title)
  const order: Order = first.data
  return again.response.headers.get('Idempotent-Replayed') === 'true' && again.data?.id === order.id
}

export async function codeOfMissing(): Promise<string | undefined> {
  const { error } = await getOrder({ client, path: { id: 999999 } })
  return error?.code
}
`

const orvalUsage = `
import { createOrder, getOrder, listOrders, type Order, type OrderSparse } from './orval/api.js'

const auth = { headers: { Authorization: 'Bearer a-token' } }
const isOrder = (order: OrderSparse): order is Order => ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at'].every((field) => field in order)

export async function itemsOf(id: number): Promise<number> {
  const response = await getOrder(id, {}, auth)
  if (response.status !== 200) throw new Error(\`getOrder: \${response.status}\`)
  if (!isOrder(response.data)) throw new Error('a sparse order')
  return response.data.items.length + response.data.total
}

export async function itemsWithoutTheLine(id: number): Promise<number> {
  const response = await getOrder(id, {}, auth)
  return response.status === 200 ? response.data.items.length : 0 // without the line
}

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const response = await listOrders({ limit: 20, ...(cursor ? { cursor } : {}) }, auth)
    if (response.status !== 200) throw new Error(\`listOrders: \${response.status}\`)
    const page = response.data
    if (!page.data.every(isOrder)) throw new Error('a sparse order')
    for (const order of page.data) count += order.items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function firstItemsWithoutTheLine(): Promise<number> {
  const response = await listOrders({}, auth)
  return response.status === 200 ? (response.data.data[0]?.items.length ?? 0) : 0 // without the line
}

export async function orderOnce(): Promise<boolean> {
  const create = () =>
    createOrder({ items: [{ sku: 'KB-101', qty: 2 }] }, { headers: { ...auth.headers, 'Idempotency-Key': 'sdk-check-1' } })
  const first = await create()
  const again = await create()
  if (first.status !== 201 || again.status !== 201) throw new Error(\`createOrder: \${first.status}\`)
  const order: Order = first.data
  return again.headers.get('Idempotent-Replayed') === 'true' && again.data.id === order.id
}

export async function codeOfMissing(): Promise<string | undefined> {
  const response = await getOrder(999999, {}, auth)
  return response.status === 404 ? response.data.code : undefined
}
`

const openapiFetchUsage = `
import createClient from 'openapi-fetch'
import type { components, paths } from './openapi-typescript.js'

const client = createClient<paths>({
  baseUrl: 'http://127.0.0.1:3000/api/v1',
  headers: { Authorization: 'Bearer a-token' },
})
const isOrder = (order: components['schemas']['OrderSparse']): order is components['schemas']['Order'] => ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at'].every((field) => field in order)

export async function itemsOf(id: number): Promise<number> {
  const { data, error } = await client.GET('/orders/{id}', { params: { path: { id } } })
  if (error) throw new Error(error.code)
  if (!isOrder(data)) throw new Error('a sparse order')
  return data.items.length + data.total
}

export async function itemsWithoutTheLine(id: number): Promise<number> {
  const { data } = await client.GET('/orders/{id}', { params: { path: { id } } })
  return data ? data.items.length : 0 // without the line
}

async function orderPage(cursor: string | null) {
  const { data, error } = await client.GET('/orders', { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } })
  if (error) throw new Error(error.code)
  return data
}

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    if (!page.data.every(isOrder)) throw new Error('a sparse order')
    for (const order of page.data) count += order.items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function firstItemsWithoutTheLine(): Promise<number> {
  const { data: page } = await client.GET('/orders', {})
  return page?.data[0]?.items.length ?? 0 // without the line
}

export async function orderOnce(): Promise<boolean> {
  const create = () =>
    client.POST('/orders', { body: { items: [{ sku: 'KB-101', qty: 2 }] }, params: { header: { 'Idempotency-Key': 'sdk-check-1' } } })
  const first = await create()
  const again = await create()
  if (first.error) throw new Error(first.error.code)
  return again.response.headers.get('Idempotent-Replayed') === 'true' && again.data?.id === first.data.id
}

export async function codeOfMissing(): Promise<string | undefined> {
  const { error } = await client.GET('/orders/{id}', { params: { path: { id: 999999 } } })
  return error?.code
}
`

const swaggerTypescriptApiUsage = `
import { Api, type HttpResponse, type Order, type OrderSparse, type Problem } from './swagger-typescript-api/api.js'

const api = new Api({ baseUrl: 'http://127.0.0.1:3000/api/v1', securityWorker: () => ({ headers: { Authorization: 'Bearer a-token' } }) })
api.setSecurityData(null)
const isOrder = (order: OrderSparse): order is Order => ['id', 'status', 'total', 'items', 'user_id', 'created_at', 'updated_at'].every((field) => field in order)

export async function itemsOf(id: number): Promise<number> {
  const { data } = await api.orders.getOrder(id)
  if (!isOrder(data)) throw new Error('a sparse order')
  return data.items.length + data.total
}

export async function itemsWithoutTheLine(id: number): Promise<number> {
  const { data } = await api.orders.getOrder(id)
  return data.items.length // without the line
}

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const { data: page } = await api.orders.listOrders({ limit: 20, ...(cursor ? { cursor } : {}) })
    if (!page.data.every(isOrder)) throw new Error('a sparse order')
    for (const order of page.data) count += order.items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function firstItemsWithoutTheLine(): Promise<number> {
  const { data: page } = await api.orders.listOrders()
  return page.data[0]?.items.length ?? 0 // without the line
}

export async function orderOnce(): Promise<boolean> {
  const create = () => api.orders.createOrder({ items: [{ sku: 'KB-101', qty: 2 }] }, { headers: { 'Idempotency-Key': 'sdk-check-1' } })
  const first = await create()
  const again = await create()
  const order: Order = first.data
  return again.headers.get('Idempotent-Replayed') === 'true' && again.data.id === order.id
}

/** A refusal rejects with the response, its error typed by the contract. */
export async function codeOfMissing(): Promise<string | undefined> {
  return api.orders.getOrder(999999).then(
    () => undefined,
    (response: HttpResponse<unknown, Problem>) => response.error.code,
  )
}
`

const zodClientUsage = `
import { isErrorFromPath } from '@zodios/core'
import { createApiClient, schemas } from './zod/api.js'

const client = createApiClient('http://127.0.0.1:3000/api/v1', { axiosConfig: { headers: { Authorization: 'Bearer a-token' } } })

export async function itemsOf(id: number): Promise<number> {
  const answer = await client.get('/orders/:id', { params: { id } })
  const order = schemas.Order.parse(answer)
  return order.items.length + order.total
}

export async function itemsWithoutTheLine(id: number): Promise<number> {
  const order = await client.get('/orders/:id', { params: { id } })
  return order.items.length // without the line
}

const orderPage = (cursor: string | null) => client.get('/orders', { queries: { limit: 20, ...(cursor ? { cursor } : {}) } })

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    for (const answer of page.data) count += schemas.Order.parse(answer).items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function firstItemsWithoutTheLine(): Promise<number> {
  const page = await client.get('/orders')
  return page.data[0]?.items.length ?? 0 // without the line
}

/** A repeat with the same key answers the same order (zodios gives the body, not the headers). */
export async function orderOnce(): Promise<boolean> {
  const create = () => client.post('/orders', { items: [{ sku: 'KB-101', qty: 2 }] }, { headers: { 'Idempotency-Key': 'sdk-check-1' } })
  const first = await create()
  const again = await create()
  return again.id === first.id && again.total === first.total
}

/** A problem's code, typed by the contract with openapi-zod-client's defaults. */
export async function codeOfMissing(): Promise<string | undefined> {
  try {
    await client.get('/orders/:id', { params: { id: 999999 } })
    return undefined
  } catch (error) {
    if (isErrorFromPath(client.api, 'get', '/orders/:id', error) && error.response.status === 404) return error.response.data.code
    throw error
  }
}
`

/** Each program, under the generator's name in docs/contracts.md's table. */
const programs = {
  '@hey-api/openapi-ts': { file: 'hey-api-usage.ts', text: heyApiUsage },
  orval: { file: 'orval-usage.ts', text: orvalUsage },
  'openapi-typescript + openapi-fetch': { file: 'openapi-fetch-usage.ts', text: openapiFetchUsage },
  'swagger-typescript-api': { file: 'swagger-typescript-api-usage.ts', text: swaggerTypescriptApiUsage },
  'openapi-zod-client': { file: 'zod-client-usage.ts', text: zodClientUsage },
}

/** The line numbers of a program's reads without the documented line. */
const linesWithoutTheLine = (text: string) =>
  text
    .split('\n')
    .map((line, index) => (line.endsWith('// without the line') ? index + 1 : 0))
    .filter((line) => line > 0)

t.test(
  "clients of five generators, from openapi.yaml, read a plain getOrder and listOrders through docs/contracts.md's one line, under tsc --strict",
  async (t) => {
    const documented = await documentedLines()
    t.same([...documented.keys()].sort(), Object.keys(programs).sort(), "docs/contracts.md's table names the five generators")
    for (const [generator, { text }] of Object.entries(programs)) {
      const line = documented.get(generator)
      t.ok(line !== undefined && text.includes(line), `${generator}: the program uses the documented line, ${line}`)
      t.equal(linesWithoutTheLine(text).length, 2, `${generator}: a get and a list without it`)
    }

    const cache = join(root, 'node_modules/.cache')
    await mkdir(cache, { recursive: true })
    const dir = await mkdtemp(join(cache, 'sdk-generation-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n')
    await createClient({
      input: contract,
      output: { path: join(dir, 'hey-api') },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
      logs: { level: 'silent' },
    })
    await generate(
      {
        input: { target: contract },
        output: {
          target: join(dir, 'orval/api.ts'),
          client: 'fetch',
          mode: 'single',
        },
      },
      root,
    )
    await writeFile(join(dir, 'openapi-typescript.ts'), astToString(await openapiTS(new URL(`file://${contract}`))))
    await generateApi({ input: contract, output: join(dir, 'swagger-typescript-api'), fileName: 'api.ts', silent: true })
    const zodClient = await generateZodClientFromOpenAPI({
      openApiDoc: parse(await readFile(contract, 'utf8')),
      disableWriteToFile: true,
      options: {},
    })
    await mkdir(join(dir, 'zod'))
    await writeFile(join(dir, 'zod/api.ts'), String(zodClient))

    for (const { file, text } of Object.values(programs)) await writeFile(join(dir, file), text)
    const diagnostics = typecheck(
      dir,
      Object.values(programs).map(({ file }) => join(dir, file)),
    )
    const files = new Set(Object.values(programs).map(({ file }) => file))
    t.same(
      diagnostics.filter((diagnostic) => !files.has(diagnostic.file)),
      [],
      'the generated clients compile',
    )
    for (const [generator, { file, text }] of Object.entries(programs)) {
      const without = linesWithoutTheLine(text)
      const own = diagnostics.filter((diagnostic) => diagnostic.file === file)
      t.same(
        own.filter((diagnostic) => !without.includes(diagnostic.line)),
        [],
        `${generator}: through the line, the plain calls read order.items, page on, create, replay and read problems with no diagnostic`,
      )
      for (const line of without) {
        t.match(
          own.find((diagnostic) => diagnostic.line === line)?.text,
          /possibly 'undefined'/,
          `${generator}: without the line, line ${line} reads a field the record may lack`,
        )
      }
    }
  },
)
