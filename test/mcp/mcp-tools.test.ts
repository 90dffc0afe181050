/**
 * /mcp with the official SDK's client over real HTTP (decisions §13, "Agents"): every REST operation is a
 * tool named by its operationId, and a tool call is the REST call made with the agent's own token:
 * an owner creates and reads, another user is refused with the problem's code, a missing scope is
 * refused before anything is read, an Idempotency-Key replays, and the call costs one request of the
 * caller's budget, as over REST.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { build, tokenFor } from '../helper.ts'
import { agent, mcpUrl } from './mcp-client.ts'

interface RestAnswer {
  status: number
  headers: Record<string, string>
  body: Record<string, unknown>
}

function answerOf(result: unknown): RestAnswer & { isError: boolean } {
  const { structuredContent, isError } = result as CallToolResult
  return { ...(structuredContent as unknown as RestAnswer), isError: isError === true }
}

t.test('tools/list has one tool per REST operation, named, described and shaped by openapi.yaml', async (t) => {
  const app = await build(t)
  const client = await agent(t, await mcpUrl(app), tokenFor(2))
  const { tools } = await client.listTools()
  const document = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string; description?: string }>>
  }
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item).filter((operation) => operation.operationId))
  // The event stream never ends, so it is no tool: the event log resource and listEvents serve agents.
  const expected = operations.map((operation) => operation.operationId).filter((id) => id !== 'streamEvents')
  t.same(
    tools.map((tool) => tool.name),
    expected,
  )
  const createOrder = tools.find((tool) => tool.name === 'createOrder')!
  const contractText = operations.find((operation) => operation.operationId === 'createOrder')!.description!
  t.ok(createOrder.description?.startsWith(contractText), 'the description is the contract’s')
  t.match(createOrder.description, /Requires the scopes: orders:write/)
  t.same(createOrder.inputSchema.required, ['body'])
  t.match(createOrder.inputSchema.properties, {
    'Idempotency-Key': { type: 'string', maxLength: 255 },
    body: { type: 'object', required: ['items'], properties: { items: { type: 'array', maxItems: 100 } } },
  })
  const getOrder = tools.find((tool) => tool.name === 'getOrder')!
  t.same(getOrder.inputSchema.required, ['id'])
  t.equal(getOrder.annotations?.readOnlyHint, true)
})

t.test('an owner creates and reads an order through tools, with the REST status, headers and body', async (t) => {
  const app = await build(t)
  const url = await mcpUrl(app)
  const client = await agent(t, url, tokenFor(2))
  const created = answerOf(
    await client.callTool({
      name: 'createOrder',
      arguments: { 'Idempotency-Key': 'agent-1', body: { items: [{ sku: 'KB-101', qty: 2 }] } },
    }),
  )
  t.equal(created.isError, false)
  t.equal(created.status, 201)
  t.match(created.body, { status: 'pending', user_id: 2, items: [{ sku: 'KB-101', qty: 2 }] })
  // The URL the agent reached, as a REST client's Location names it.
  t.equal(created.headers.location, `${url.origin}/api/v1/orders/${created.body.id}`)
  t.ok(created.headers.etag)

  const read = answerOf(await client.callTool({ name: 'getOrder', arguments: { id: created.body.id } }))
  t.equal(read.status, 200)
  t.same(read.body, created.body)

  // The key works as over REST: the same request replays the stored outcome, no second order.
  const replayed = answerOf(
    await client.callTool({
      name: 'createOrder',
      arguments: { 'Idempotency-Key': 'agent-1', body: { items: [{ sku: 'KB-101', qty: 2 }] } },
    }),
  )
  t.equal(replayed.status, 201)
  t.equal(replayed.headers['idempotent-replayed'], 'true')
  t.equal(replayed.body.id, created.body.id)
  const listed = answerOf(await client.callTool({ name: 'listOrders', arguments: { limit: 100 } }))
  t.equal((listed.body.data as unknown[]).filter((order) => (order as { id: unknown }).id === created.body.id).length, 1)
})

t.test('another user, a missing scope and a broken argument are refused with the problem as over REST', async (t) => {
  const app = await build(t)
  const url = await mcpUrl(app)
  const owner = await agent(t, url, tokenFor(2))
  const created = answerOf(await owner.callTool({ name: 'createOrder', arguments: { body: { items: [{ sku: 'KB-101', qty: 1 }] } } }))

  const stranger = await agent(t, url, tokenFor(3))
  const refused = answerOf(await stranger.callTool({ name: 'getOrder', arguments: { id: created.body.id } }))
  t.equal(refused.isError, true)
  t.equal(refused.status, 403)
  t.match(refused.body, { code: 'FORBIDDEN', status: 403 })
  const cancelled = answerOf(await stranger.callTool({ name: 'cancelOrder', arguments: { id: created.body.id } }))
  t.match(cancelled, { isError: true, status: 403, body: { code: 'FORBIDDEN' } })

  const reader = await agent(t, url, tokenFor(2, 'orders:read'))
  const unscoped = answerOf(await reader.callTool({ name: 'createOrder', arguments: { body: { items: [{ sku: 'KB-101', qty: 1 }] } } }))
  t.match(unscoped, { isError: true, status: 403, body: { code: 'FORBIDDEN', detail: /orders:write/ } })

  const invalid = answerOf(await owner.callTool({ name: 'createOrder', arguments: { body: { items: [{ sku: 'KB-101', qty: 0 }] } } }))
  t.match(invalid, { isError: true, status: 400, body: { code: 'VALIDATION_FAILED' } })
  const unknownSku = answerOf(await owner.callTool({ name: 'createOrder', arguments: { body: { items: [{ sku: 'NOPE-1', qty: 1 }] } } }))
  t.match(unknownSku, { isError: true, status: 422, body: { code: 'UNKNOWN_SKU' } })
  const stray = answerOf(await owner.callTool({ name: 'getOrder', arguments: { id: created.body.id, colour: 'red' } }))
  t.match(stray, { isError: true, status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ in: 'argument', name: 'colour' }] } })
  const missing = answerOf(await owner.callTool({ name: 'getOrder', arguments: {} }))
  t.match(missing, { isError: true, status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ in: 'argument', name: 'id' }] } })
})

t.test('a tool call costs one request of the caller’s budget, as the REST call does', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '50' } })
  const client = await agent(t, await mcpUrl(app), tokenFor(2))
  const remaining = async () => {
    const { headers } = answerOf(await client.callTool({ name: 'listProducts', arguments: {} }))
    return Number(/r=(\d+)/.exec(headers.ratelimit ?? '')?.[1])
  }
  const first = await remaining()
  const second = await remaining()
  t.equal(first - second, 1)
})
