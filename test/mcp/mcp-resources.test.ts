/**
 * MCP resources (decisions §13, "Agents"): the contracts as served, and the caller's event log, read through
 * the REST list so that an agent sees exactly the events it may read and resumes with `after`.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { build, tokenFor } from '../helper.ts'
import { agent, mcpUrl } from './mcp-client.ts'

/** The text of a read resource's first content (ours are all text). */
function textOf(result: { contents: Array<{ text: string } | { blob: string }> }): string {
  const [first] = result.contents
  return first && 'text' in first ? first.text : ''
}

t.test('the contracts are resources, as the service serves them', async (t) => {
  const app = await build(t)
  const client = await agent(t, await mcpUrl(app), tokenFor(2))
  const { resources } = await client.listResources()
  t.same(
    resources.map((resource) => resource.uri),
    ['api://contracts/openapi.yaml', 'api://contracts/schema.graphql', 'api://events'],
  )
  const openapi = await client.readResource({ uri: 'api://contracts/openapi.yaml' })
  const served = await app.inject({ url: '/api/v1/openapi.yaml' })
  t.same(openapi.contents, [{ uri: 'api://contracts/openapi.yaml', mimeType: 'application/yaml', text: served.body }])
  const sdl = await client.readResource({ uri: 'api://contracts/schema.graphql' })
  t.equal(textOf(sdl), readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'))
  const missing = await client.readResource({ uri: 'api://nothing' }).catch((error: unknown) => error)
  t.ok(missing instanceof McpError)
  t.equal((missing as McpError).code, -32002)
})

t.test('the event log resource shows the caller its own events, and resumes after an id', async (t) => {
  const app = await build(t)
  const url = await mcpUrl(app)
  const owner = await agent(t, url, tokenFor(2))
  const stranger = await agent(t, url, tokenFor(3))
  const { resourceTemplates } = await owner.listResourceTemplates()
  t.same(
    resourceTemplates.map((template) => template.uriTemplate),
    ['api://events{?after,types,limit}'],
  )
  const eventsOf = async (client: typeof owner, uri: string) =>
    JSON.parse(textOf(await client.readResource({ uri }))) as {
      data: Array<{ id: string; type: string; data: { id: number } }>
    }
  const before = await eventsOf(owner, 'api://events?limit=100')
  const last = before.data.at(-1)?.id
  const created = await owner.callTool({ name: 'createOrder', arguments: { body: { items: [{ sku: 'KB-101', qty: 1 }] } } })
  const orderId = (created.structuredContent as { body: { id: number } }).body.id

  // The relay numbers an event after its commit (decisions §13): read until it is there, 10 s at most.
  const afterUri = last === undefined ? 'api://events?types=order.created' : `api://events?after=${last}&types=order.created`
  let after = await eventsOf(owner, afterUri)
  for (let tries = 0; after.data.length === 0 && tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    after = await eventsOf(owner, afterUri)
  }
  t.match(after.data, [{ type: 'order.created', data: { id: orderId } }])
  const strangers = await eventsOf(stranger, 'api://events?types=order.created&limit=100')
  t.notOk(
    strangers.data.some((event) => event.data.id === orderId),
    'another user does not see the order',
  )
  const refused = await owner.readResource({ uri: 'api://events?after=nope' }).catch((error: unknown) => error)
  t.ok(refused instanceof McpError)
  t.match((refused as McpError).data, { status: 400, body: { code: 'VALIDATION_FAILED' } })
})
