// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * openapi.yaml serves SDK generators as it is: clients generated with
 * @hey-api/openapi-ts and orval, from the file on disk (no network), plus a small program per
 * client that lists orders and pages on with `page.cursor`, reads an order and creates one, all
 * compile under `tsc --strict` with no diagnostic. Records of an operation that takes `fields=`
 * are `Order | OrderSparse` (the contract is truthful about sparse fieldsets), so the programs
 * narrow with a type guard, as a real client would.
 *
 * Generated once for the file and compiled in one program, to keep the test short.
 */
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { createClient } from '@hey-api/openapi-ts'
import { generate } from 'orval'

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

const heyApiUsage = `
import { createClient } from './hey-api/client/index.js'
import { createOrder, getOrder, listOrders } from './hey-api/sdk.gen.js'
import type { Order, OrderSparse } from './hey-api/types.gen.js'

const client = createClient({ baseUrl: 'http://127.0.0.1:3000/api/v1', auth: () => 'a-token' })

/** Without fields=, every record is a full Order; the guard checks a property OrderSparse may lack. */
function isFullOrder(order: Order | OrderSparse): order is Order {
  return typeof order.id === 'number' && typeof order.status === 'string' && Array.isArray(order.items)
}

async function orderPage(cursor: string | null) {
  const page = await listOrders({ client, query: { limit: 20, ...(cursor ? { cursor } : {}) } })
  if (!page.data) throw new Error(\`listOrders: \${page.response.status}\`)
  return page.data
}

export async function allOrderIds(): Promise<number[]> {
  const ids: number[] = []
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    ids.push(...page.data.filter(isFullOrder).map((order) => order.id))
    // The raw cursor of the next page: no URL to parse.
    cursor = page.page.cursor
  } while (cursor !== null)
  return ids
}

export async function totalOf(id: number): Promise<number> {
  const { data } = await getOrder({ client, path: { id } })
  if (!data || !isFullOrder(data)) throw new Error('no order')
  return data.total
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
import { createOrder, getOrder, listOrders, type Order, type OrderSparse } from './orval/api.js'

const auth = { headers: { Authorization: 'Bearer a-token' } }

function isFullOrder(order: Order | OrderSparse): order is Order {
  return typeof order.id === 'number' && typeof order.status === 'string' && Array.isArray(order.items)
}

async function orderPage(cursor: string | null) {
  const page = await listOrders({ limit: 20, ...(cursor ? { cursor } : {}) }, auth)
  if (page.status !== 200) throw new Error(\`listOrders: \${page.status}\`)
  return page.data
}

export async function allOrderIds(): Promise<number[]> {
  const ids: number[] = []
  let cursor: string | null = null
  do {
    const page = await orderPage(cursor)
    ids.push(...page.data.filter(isFullOrder).map((order) => order.id))
    cursor = page.page.cursor
  } while (cursor !== null)
  return ids
}

export async function totalOf(id: number): Promise<number> {
  const response = await getOrder(id, {}, auth)
  if (response.status !== 200 || !isFullOrder(response.data)) throw new Error('no order')
  return response.data.total
}

export async function orderOne(): Promise<string> {
  const response = await createOrder({ items: [{ sku: 'KB-101', qty: 2 }] }, { headers: { ...auth.headers, 'Idempotency-Key': 'sdk-check-1' } })
  if (response.status !== 201) throw new Error(\`createOrder: \${response.status}\`)
  const order: Order = response.data
  return order.status
}
`

// A mistake each program would make without narrowing: the checker must see it (no false pass).
const unnarrowed = `
import type { OrderPage } from './hey-api/types.gen.js'
export const firstId = (page: OrderPage): number => page.data[0]!.id
`

t.test('clients generated by @hey-api/openapi-ts and orval from openapi.yaml compile under tsc --strict with their usage', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sdk-generation-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'package.json'), '{"type":"module"}\n')
  await createClient({
    input: contract,
    output: { path: join(dir, 'hey-api') },
    plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
    logs: { level: 'silent' },
  })
  await generate({ input: { target: contract }, output: { target: join(dir, 'orval/api.ts'), client: 'fetch', mode: 'single' } }, root)
  await writeFile(join(dir, 'hey-api-usage.ts'), heyApiUsage)
  await writeFile(join(dir, 'orval-usage.ts'), orvalUsage)
  await writeFile(join(dir, 'unnarrowed.ts'), unnarrowed)

  const diagnostics = typecheck(dir, [join(dir, 'hey-api-usage.ts'), join(dir, 'orval-usage.ts'), join(dir, 'unnarrowed.ts')])
  const elsewhere = diagnostics.filter((line) => !line.startsWith('unnarrowed.ts'))
  t.same(elsewhere, [], 'the generated clients and their usage compile with zero diagnostics')
  const caught = diagnostics.filter((line) => line.startsWith('unnarrowed.ts'))
  t.equal(caught.length, 1, 'reading id of an unnarrowed record is an error: the check is not vacuous')
  t.match(caught[0], /undefined/)
})
