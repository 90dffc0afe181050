/** The SDK's own client against the app listening on a loopback port: how the MCP tests call /mcp. */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

interface Teardown {
  teardown(fn: () => unknown): void
}

/** The app listening on a random loopback port; the MCP endpoint's URL. */
export async function mcpUrl(app: FastifyInstance): Promise<URL> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`)
}

/** An SDK client connected to `url` with `token` as its bearer credential. */
export async function agent(t: Teardown, url: URL, token: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  t.teardown(() => client.close())
  return client
}
