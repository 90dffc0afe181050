/**
 * What consumers do in their own CI: mock the service with Prism (@stoplight/prism-cli, a real
 * process on its own port, serving openapi.yaml's examples) and run their generated client against it.
 * The same client program (openapi-typescript types, openapi-fetch) runs against the mock and against
 * the real service over HTTP; each answer's status and shape must agree, and every response either
 * gives must match openapi.yaml (test/contract-validator).
 */
import t, { type Test } from 'tap'
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer, type AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import createClient from 'openapi-fetch'
import { parse } from 'yaml'
import type { paths } from '../../src/generated/openapi/paths.ts'
import { contractViolations } from '../contract-validator.ts'
import { build, tokenFor } from '../helper.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const PREFIX = '/api/v1'

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** `prism mock openapi.yaml` on its own port, stopped when the test ends. Prism serves paths without the server's /api/v1. */
async function startPrism(t: Test): Promise<string> {
  const port = await freePort()
  const prism: ChildProcess = spawn(
    process.execPath,
    [
      join(root, 'node_modules/@stoplight/prism-cli/dist/index.js'),
      'mock',
      join(root, 'openapi.yaml'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  prism.stdout?.on('data', (chunk) => (output += chunk))
  prism.stderr?.on('data', (chunk) => (output += chunk))
  t.teardown(() => {
    prism.kill()
  })
  const deadline = Date.now() + 60_000
  while (!output.includes('Prism is listening')) {
    if (prism.exitCode !== null) throw new Error(`prism exited with ${prism.exitCode}:\n${output}`)
    if (Date.now() > deadline) throw new Error(`prism did not start within 60 s:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return `http://127.0.0.1:${port}`
}

/** A generated client whose every response is checked against openapi.yaml (as if under /api/v1). */
function checkedClient(t: Test, baseUrl: string, pathPrefix: string, token?: string) {
  return createClient<paths>({
    baseUrl,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    fetch: async (request: Request) => {
      const response = await fetch(request)
      const url = new URL(request.url)
      const violations = contractViolations({
        method: request.method,
        url: PREFIX + url.pathname.slice(pathPrefix.length) + url.search,
        statusCode: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        body: await response.clone().text(),
      })
      t.same(violations, [], `${baseUrl}: ${request.method} ${url.pathname} answers as openapi.yaml says`)
      return response
    },
  })
}

/** The consumer's program: what it reads, as plain values to compare. */
async function consumerRun(client: ReturnType<typeof checkedClient>, anonymous: ReturnType<typeof checkedClient>) {
  const list = await client.GET('/orders', { params: { query: { limit: 1 } } })
  const firstId = list.data?.data[0]?.id
  const one = await client.GET('/orders/{id}', { params: { path: { id: Number(firstId) } } })
  const created = await client.POST('/orders', {
    body: { items: [{ sku: 'KB-101', qty: 2 }] },
    params: { header: { 'Idempotency-Key': `prism-${Date.now()}` } },
  })
  const user = await client.GET('/users/{id}', { params: { path: { id: 2 } } })
  const refused = await anonymous.GET('/orders', {})
  return {
    list: { status: list.response.status, keys: Object.keys(list.data ?? {}).sort(), pageKeys: Object.keys(list.data?.page ?? {}).sort() },
    one: { status: one.response.status, keys: Object.keys(one.data ?? {}).sort() },
    created: {
      status: created.response.status,
      keys: Object.keys(created.data ?? {}).sort(),
      itemKeys: Object.keys(created.data?.items[0] ?? {}).sort(),
    },
    user: { status: user.response.status, keys: Object.keys(user.data ?? {}).sort() },
    // A problem+json answer is typed as the client's `error` (openapi-typescript reads the media type).
    refused: {
      status: refused.response.status,
      type: refused.response.headers.get('content-type')?.split(';')[0],
      errorKeys: Object.keys(refused.error ?? {})
        .filter((key) => ['type', 'title', 'status', 'code'].includes(key))
        .sort(),
    },
  }
}

t.test('a client generated from openapi.yaml works against the Prism mock as against the service', async (t) => {
  const mock = await startPrism(t)
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const service = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${PREFIX}`
  const token = tokenFor(2, 'orders:read orders:write')

  const fromService = await consumerRun(checkedClient(t, service, PREFIX, token), checkedClient(t, service, PREFIX))
  const fromMock = await consumerRun(checkedClient(t, mock, '', 'any-token-prism-checks-only-presence'), checkedClient(t, mock, ''))

  t.same(fromService.list.status, 200)
  t.same(fromService.created.status, 201)
  t.same(fromService.refused, { status: 401, type: 'application/problem+json', errorKeys: ['code', 'status', 'title', 'type'] })
  t.same(fromMock, fromService, 'the same statuses and shapes from the mock as from the service')

  // The mock answers with the contract's own examples (what the docs page shows too), not invented data.
  const client = checkedClient(t, mock, '', 'any-token')
  t.same((await client.GET('/users/{id}', { params: { path: { id: 2 } } })).data, exampleOf('/users/{id}', 'get', '200'))
  t.same((await client.GET('/products', {})).data, exampleOf('/products', 'get', '200'))
  t.same(
    (await client.POST('/articles/{id}/comments', { params: { path: { id: 4 } }, body: { body: 'Nice.' } })).data,
    exampleOf('/articles/{id}/comments', 'post', '201'),
  )
})

function exampleOf(path: string, method: string, status: string): unknown {
  const document = parse(readFileSync(join(root, 'openapi.yaml'), 'utf8')) as {
    paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { example?: unknown }> }> }>>
  }
  const example = document.paths[path]?.[method]?.responses[status]?.content['application/json']?.example
  if (example === undefined) throw new Error(`${method} ${path} ${status} has no example`)
  return example
}
