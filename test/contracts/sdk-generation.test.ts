// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * openapi.yaml serves SDK generators as it is (decisions §16): clients generated with
 * @hey-api/openapi-ts, orval, openapi-typescript + openapi-fetch, swagger-typescript-api and
 * openapi-zod-client, from the file on disk (no network), each with a small program that reads
 * `order.items` of a plain getOrder and of a plain listOrders page with no type guard, pages on with
 * `page.cursor` and creates an order, all compile under `tsc --strict` with no diagnostic.
 * Every generator runs with its defaults: a full read answers only the full record (sparse
 * fieldsets are read from the /sparse/ mirrors, operations of their own), so no generator has a
 * second media type of the same answer to put in a union. openapi-zod-client's problems are typed,
 * because the contract lists them as `application/json` too.
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
function typecheck(dir: string, files: string[]): string[] {
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
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file
      ? `${relative(dir, diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}: `
      : ''
    return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
  })
}

// Each program: the items of one order and of every order of a page, read with no narrowing.
const heyApiUsage = `
import { createClient } from './hey-api/client/index.js'
import { createOrder, getOrder, listOrders } from './hey-api/sdk.gen.js'
import type { Order } from './hey-api/types.gen.js'

const client = createClient({ baseUrl: 'http://127.0.0.1:3000/api/v1', auth: () => 'a-token' })

export async function itemsOf(id: number): Promise<number> {
  const { data, error } = await getOrder({ client, path: { id } })
  if (error) throw new Error(error.code)
  return data.items.length + data.total
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
    for (const order of page.data) count += order.items.length
    // The raw cursor of the next page: no URL to parse.
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function orderOne(): Promise<string> {
  const { data, error } = await createOrder({
    client,
    body: { items: [{ sku: 'KB-101', qty: 2 }] },
    headers: { 'Idempotency-Key': 'sdk-check-1' },
  })
  if (error) throw new Error(error.title)
  const order: Order = data
  return order.status
}
`

const orvalUsage = `
import { createOrder, getOrder, listOrders, type Order } from './orval/api.js'

const auth = { headers: { Authorization: 'Bearer a-token' } }

export async function itemsOf(id: number): Promise<number> {
  const response = await getOrder(id, auth)
  if (response.status !== 200) throw new Error(\`getOrder: \${response.status}\`)
  return response.data.items.length + response.data.total
}

async function orderPage(cursor: string | null) {
  const response = await listOrders({ limit: 20, ...(cursor ? { cursor } : {}) }, auth)
  if (response.status !== 200) throw new Error(\`listOrders: \${response.status}\`)
  return response.data
}

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    for (const order of page.data) count += order.items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function orderOne(): Promise<string> {
  const response = await createOrder({ items: [{ sku: 'KB-101', qty: 2 }] }, { headers: { ...auth.headers, 'Idempotency-Key': 'sdk-check-1' } })
  if (response.status !== 201) throw new Error(\`createOrder: \${response.status}\`)
  const order: Order = response.data
  return order.status
}
`

const openapiFetchUsage = `
import createClient from 'openapi-fetch'
import type { paths } from './openapi-typescript.js'

const client = createClient<paths>({
  baseUrl: 'http://127.0.0.1:3000/api/v1',
  headers: { Authorization: 'Bearer a-token' },
})

export async function itemsOf(id: number): Promise<number> {
  const { data, error } = await client.GET('/orders/{id}', { params: { path: { id } } })
  if (error) throw new Error(error.code)
  return data.items.length + data.total
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
    for (const order of page.data) count += order.items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function orderOne(): Promise<string> {
  const { data, error } = await client.POST('/orders', {
    body: { items: [{ sku: 'KB-101', qty: 2 }] },
    params: { header: { 'Idempotency-Key': 'sdk-check-1' } },
  })
  if (error) throw new Error(error.code)
  return data.status
}
`

const swaggerTypescriptApiUsage = `
import { Api, type Order } from './swagger-typescript-api/api.js'

const api = new Api({ baseUrl: 'http://127.0.0.1:3000/api/v1', securityWorker: () => ({ headers: { Authorization: 'Bearer a-token' } }) })
api.setSecurityData(null)

export async function itemsOf(id: number): Promise<number> {
  const { data } = await api.orders.getOrder(id)
  return data.items.length + data.total
}

async function orderPage(cursor: string | null) {
  const { data } = await api.orders.listOrders({ limit: 20, ...(cursor ? { cursor } : {}) })
  return data
}

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    for (const order of page.data) count += order.items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
}

export async function orderOne(): Promise<string> {
  const { data } = await api.orders.createOrder({ items: [{ sku: 'KB-101', qty: 2 }] }, { headers: { 'Idempotency-Key': 'sdk-check-1' } })
  const order: Order = data
  return order.status
}
`

const zodClientUsage = `
import { isErrorFromPath } from '@zodios/core'
import { createApiClient } from './zod/api.js'

const client = createApiClient('http://127.0.0.1:3000/api/v1', { axiosConfig: { headers: { Authorization: 'Bearer a-token' } } })

export async function itemsOf(id: number): Promise<number> {
  const order = await client.get('/orders/:id', { params: { id } })
  return order.items.length + order.total
}

async function orderPage(cursor: string | null) {
  return client.get('/orders', { queries: { limit: 20, ...(cursor ? { cursor } : {}) } })
}

export async function allItems(): Promise<number> {
  let count = 0
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    for (const order of page.data) count += order.items.length
    cursor = page.page.cursor
  } while (cursor !== null)
  return count
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

// A mistake a program could make: the checker must see it (no false pass). A sparse page's records
// may lack fields, so reading one without narrowing is an error.
const unnarrowed = `
import type { SparseOrderPage } from './hey-api/types.gen.js'
export const firstId = (page: SparseOrderPage): number => page.data[0]!.id
`

t.test(
  'clients of five generators, from openapi.yaml, read a plain getOrder and listOrders as full Orders under tsc --strict',
  async (t) => {
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

    const programs = {
      'hey-api-usage.ts': heyApiUsage,
      'orval-usage.ts': orvalUsage,
      'openapi-fetch-usage.ts': openapiFetchUsage,
      'swagger-typescript-api-usage.ts': swaggerTypescriptApiUsage,
      'zod-client-usage.ts': zodClientUsage,
      'unnarrowed.ts': unnarrowed,
    }
    for (const [name, text] of Object.entries(programs)) await writeFile(join(dir, name), text)

    const diagnostics = typecheck(
      dir,
      Object.keys(programs).map((name) => join(dir, name)),
    )
    for (const name of Object.keys(programs).filter((name) => name !== 'unnarrowed.ts')) {
      t.same(
        diagnostics.filter((line) => line.startsWith(name)),
        [],
        `${name}: the plain calls read order.items with zero diagnostics`,
      )
    }
    t.same(
      diagnostics.filter((line) => !Object.keys(programs).some((name) => line.startsWith(name))),
      [],
      'the generated clients compile',
    )
    const caught = diagnostics.filter((line) => line.startsWith('unnarrowed.ts'))
    t.equal(caught.length, 1, 'reading id of an unnarrowed sparse record is an error: the check is not vacuous')
    t.match(caught[0], /undefined/)
  },
)
