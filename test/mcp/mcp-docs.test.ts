/**
 * docs/agents.md's client code works as written: its two TypeScript blocks run, unchanged, against
 * the service listening on loopback, with a token for Grace (user 2) on the demo data.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build, tokenFor } from '../helper.ts'
import { agent, mcpUrl } from './mcp-client.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const [connectBlock, agentLoopBlock] = [
  ...(await readFile(join(root, 'docs/agents.md'), 'utf8')).matchAll(/^```ts\n([\s\S]*?)^```$/gm),
].map((match) => match[1]!)

/** Writes a block where the repository's node_modules resolve its imports (.tap/ is not tracked). */
async function place(t: { teardown(fn: () => unknown): void }, name: string, code: string): Promise<string> {
  const dir = join(root, '.tap', `agents-doc-${process.pid}`)
  await mkdir(dir, { recursive: true })
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, name)
  await writeFile(file, code)
  return file
}

t.test('the SDK example connects, creates, reads, is refused and reads the contract as its comments say', async (t) => {
  const app = await build(t)
  const url = await mcpUrl(app)
  const file = await place(t, 'connect.mts', connectBlock ?? '')
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
    cwd: root,
    env: { ...process.env, MCP_URL: url.href, TOKEN: tokenFor(2, 'orders:read orders:write') },
    timeout: 60_000,
  })
  const lines = stdout.split('\n')
  t.match(lines[0], /^listOrders, createOrder, getOrder, /)
  t.match(lines[1], new RegExp(`^201 ${url.origin}/api/v1/orders/\\d+ 17800$`))
  t.match(stdout, /status: 200,[\s\S]*status: 'pending',[\s\S]*total: 17800/)
  t.match(stdout, /true \{[\s\S]*status: 403,[\s\S]*code: 'FORBIDDEN'/)
  t.match(lines.at(-2), 'application/yaml')
})

t.test('the agent-loop helpers declare the tools and ask before a change', async (t) => {
  // Loaded (and compiled) first: compiling holds this process's event loop, which the server's
  // keep-alive timer shares with the client's, and could close a connection the client then reuses.
  const loop = (await import(await place(t, 'agent-loop.mts', agentLoopBlock ?? ''))) as {
    toolDeclarations(client: unknown): Promise<Array<{ name: string; description: string; input_schema: { type: string } }>>
    runToolCall(
      client: unknown,
      call: { name: string; input: Record<string, unknown> },
      confirm: (name: string) => Promise<boolean>,
    ): Promise<{ isError: boolean; text: string }>
  }
  const app = await build(t)
  const client = await agent(t, await mcpUrl(app), tokenFor(2))
  const declarations = await loop.toolDeclarations(client)
  t.match(
    declarations.find((declaration) => declaration.name === 'createOrder'),
    { description: /pending order/, input_schema: { type: 'object' } },
  )
  const asked: string[] = []
  const decline = async (name: string) => {
    asked.push(name)
    return false
  }
  const declined = await loop.runToolCall(client, { name: 'createOrder', input: { body: { items: [{ sku: 'KB-101', qty: 1 }] } } }, decline)
  t.same(declined, { isError: true, text: 'The user declined this change.' })
  const read = await loop.runToolCall(client, { name: 'listProducts', input: { limit: 1 } }, decline)
  t.equal(read.isError, false)
  t.match(JSON.parse(read.text), { status: 200, body: { data: [{ sku: String }] } })
  t.same(asked, ['createOrder'], 'asked only before the change')
})
