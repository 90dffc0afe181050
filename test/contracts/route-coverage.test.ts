/**
 * The REST contract and the registered routes agree both ways. Read from openapi.yaml itself, not
 * from the generated code, so the check does not trust the generator it is checking.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { build } from '../helper.ts'

interface OpenApi {
  servers: Array<{ url: string }>
  paths: Record<string, Record<string, { operationId: string }>>
}

const document = parse(await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as OpenApi
const prefix = new URL(document.servers[0]!.url).pathname.replace(/\/$/, '')
const METHODS = ['get', 'put', 'post', 'patch', 'delete']

/** Operations of the contract not implemented yet. The REST issue empties this list. */
const NOT_BUILT_YET = new Set<string>([])

const contractOperations = Object.entries(document.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({
    operationId: item[method]!.operationId,
    method: method.toUpperCase(),
    url: prefix + path.replace(/\{(\w+)\}/g, ':$1'),
  })),
)

t.test('every operation in openapi.yaml has a route, unless it is listed as not built yet', async (t) => {
  const app = await build(t)
  for (const operation of contractOperations) {
    const registered = app.hasRoute({ method: operation.method as 'GET', url: operation.url })
    if (NOT_BUILT_YET.has(operation.operationId)) {
      t.notOk(registered, `${operation.operationId} is built: remove it from NOT_BUILT_YET`)
    } else {
      t.ok(registered, `${operation.operationId} (${operation.method} ${operation.url}) is registered`)
    }
  }
  for (const name of NOT_BUILT_YET) {
    t.ok(
      contractOperations.some((operation) => operation.operationId === name),
      `${name} is in the contract`,
    )
  }
})

t.test('every registered route under the API prefix is an operation of openapi.yaml', async (t) => {
  const routes: Array<{ method: string; url: string }> = []
  const app = await build(t, {})
  // printRoutes is the only public listing of registered routes; parse its method-annotated tree,
  // where a route below another (`/:id` under `/orders`, `/orders` under the index `/api/v1`) is
  // printed relative to it, one level deeper per four characters of indentation.
  const listing = app.printRoutes({ commonPrefix: false, includeMeta: false })
  const ancestors: string[] = []
  for (const line of listing.split('\n')) {
    const name = line.replace(/^[\s│├└─]+/, '')
    const match = /^(\S*) \(([A-Z, ]+)\)/.exec(name)
    if (!match) continue
    const depth = (line.length - name.length) / 4 - 1
    ancestors.length = depth
    const url = (ancestors.at(-1) ?? '') + match[1]!
    ancestors.push(url)
    for (const method of match[2]!.split(', ')) routes.push({ method, url })
  }
  const apiRoutes = routes.filter((route) => route.url.startsWith(`${prefix}/`) && route.method !== 'HEAD')
  t.ok(apiRoutes.length > 0, 'found the API routes')
  for (const route of apiRoutes) {
    t.ok(
      contractOperations.some((operation) => operation.method === route.method && operation.url === route.url),
      `${route.method} ${route.url} is in openapi.yaml`,
    )
  }
})
