/**
 * The official conformance suite (@modelcontextprotocol/conformance, offline) against /mcp
 * (decisions §13, "Agents"). Its client sends no credential, so a loopback relay adds an agent's bearer
 * token, as an agent's configured header would. Most of its server scenarios call the fixtures of
 * the SDK's "everything" test server (tools named test_*, resources test://…, prompts, logging,
 * completion, subscriptions); this service has none of them by design, and those scenarios fail
 * only for that reason. Every scenario about the protocol itself passes: initialize, ping,
 * tools/list, resources/list, and DNS-rebinding protection.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build, tokenFor } from '../helper.ts'
import { mcpUrl } from './mcp-client.ts'

const CONFORMANCE = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url))
/** The scenarios that test the protocol, not the fixtures of the SDK's test server. */
const PROTOCOL_SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection']
/** Why every other scenario fails here: it calls a fixture or a capability this server does not have. */
const FIXTURE_MISSING = /No tool test_|No resource test:\/\/|Tool '\w+' not found|Method not found/

/** A loopback relay to `target` that adds `authorization` to every request; its URL. */
async function relayWithToken(t: { teardown(fn: () => unknown): void }, target: URL, authorization: string): Promise<URL> {
  const relay = createServer((request, response) => {
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, authorization },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      },
    )
    upstream.on('error', () => response.destroy())
    request.pipe(upstream)
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => relay.close(resolve)))
  return new URL(`http://127.0.0.1:${(relay.address() as AddressInfo).port}${target.pathname}`)
}

t.test('the conformance suite passes every protocol scenario; the others fail only for the test fixtures', async (t) => {
  const app = await build(t)
  const url = await relayWithToken(t, await mcpUrl(app), `Bearer ${tokenFor(2)}`)
  const output = await mkdtemp(join(tmpdir(), 'mcp-conformance-'))
  t.teardown(() => rm(output, { recursive: true, force: true }))
  // The suite exits non-zero while any scenario fails; its per-check results are what this test reads.
  await promisify(execFile)(process.execPath, [CONFORMANCE, 'server', '--url', url.href, '--suite', 'all', '-o', output], {
    timeout: 90_000,
  }).catch(() => undefined)

  const results = new Map<string, Array<{ id: string; status: string; errorMessage?: string }>>()
  for (const folder of await readdir(output)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(folder)?.[1]
    if (scenario) results.set(scenario, JSON.parse(await readFile(join(output, folder, 'checks.json'), 'utf8')))
  }
  t.ok(results.size >= 20, `the suite ran its scenarios (${results.size})`)
  for (const scenario of PROTOCOL_SCENARIOS) {
    const checks = results.get(scenario) ?? []
    t.ok(checks.length > 0, `${scenario} ran`)
    t.same(
      checks.filter((check) => check.status === 'FAILURE'),
      [],
      `${scenario} passes`,
    )
  }
  for (const [scenario, checks] of results) {
    if (PROTOCOL_SCENARIOS.includes(scenario)) continue
    for (const check of checks.filter((check) => check.status === 'FAILURE'))
      t.match(check.errorMessage, FIXTURE_MISSING, `${scenario}: ${check.id} fails only for a missing fixture`)
  }
})
