/**
 * /mcp without a valid bearer token (decisions §13, "Agents", the MCP authorization spec): 401 whose
 * WWW-Authenticate names the protected-resource metadata (RFC 9728), which the SDK's own discovery
 * reads; the SDK client cannot connect. Nothing of MCP is served without a token.
 */
import t from 'tap'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js'
import { build, tokenFor } from '../helper.ts'
import { agent, mcpUrl } from './mcp-client.ts'

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
})
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

t.test('a request without a token is 401 pointing at the protected-resource metadata', async (t) => {
  const app = await build(t)
  const url = await mcpUrl(app)
  const response = await fetch(url, { method: 'POST', headers: mcpHeaders, body: initialize })
  t.equal(response.status, 401)
  // An MCP client accepts application/json, not problem+json: the problem comes in the type it reads (decisions §16).
  t.match(response.headers.get('content-type'), /^application\/json/)
  t.match(await response.json(), { code: 'UNAUTHENTICATED', status: 401 })
  const challenge = response.headers.get('www-authenticate')
  t.match(challenge, /^Bearer realm="api", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"$/)
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(response)
  t.equal(resourceMetadataUrl?.href, new URL('/.well-known/oauth-protected-resource', url).href)

  const metadata = await discoverOAuthProtectedResourceMetadata(url, { resourceMetadataUrl: resourceMetadataUrl! })
  t.equal(metadata.resource, url.href)
  t.same(metadata.bearer_methods_supported, ['header'])
  t.same(metadata.scopes_supported, ['orders:read', 'orders:write', 'articles:write', 'admin'])
  // Newer clients look at the path-suffixed location first (RFC 9728 §3.1): the same document.
  t.same(await discoverOAuthProtectedResourceMetadata(url), metadata)
})

t.test('a refused token is 401 invalid_token with the metadata, and the SDK client cannot connect', async (t) => {
  const app = await build(t)
  const url = await mcpUrl(app)
  const expired = await fetch(url, {
    method: 'POST',
    headers: { ...mcpHeaders, authorization: `Bearer ${tokenFor(2, 'orders:read', -60)}` },
    body: initialize,
  })
  t.equal(expired.status, 401)
  t.match(
    expired.headers.get('www-authenticate'),
    /^Bearer realm="api", error="invalid_token", .*resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"$/,
  )

  const refused = await agent(t, url, 'not-a-jwt').then(
    () => undefined,
    (error: unknown) => error,
  )
  t.ok(refused instanceof StreamableHTTPError, 'connect rejects')
  t.equal((refused as StreamableHTTPError).code, 401)
})

t.test('a stateless server: no session id, and GET (a server stream) is 405', async (t) => {
  const app = await build(t)
  const url = await mcpUrl(app)
  const authorization = `Bearer ${tokenFor(2)}`
  const initialized = await fetch(url, { method: 'POST', headers: { ...mcpHeaders, authorization }, body: initialize })
  t.equal(initialized.status, 200)
  t.equal(initialized.headers.get('mcp-session-id'), null)
  t.match(await initialized.json(), {
    result: { serverInfo: { name: 'contract-api' }, capabilities: { tools: {}, resources: { subscribe: false } } },
  })
  // Any instance answers a tools/call on its own, without an initialize before it.
  const listed = await fetch(url, {
    method: 'POST',
    headers: { ...mcpHeaders, authorization, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'listProducts', arguments: { limit: 1 } } }),
  })
  t.match(await listed.json(), { result: { structuredContent: { status: 200, body: { data: [{ sku: String }] } } } })
  const stream = await fetch(url, { headers: { accept: 'text/event-stream', authorization } })
  t.equal(stream.status, 405)
  t.equal(stream.headers.get('allow'), 'POST')
})

t.test('a browser page is refused unless its origin is trusted (DNS rebinding)', async (t) => {
  const app = await build(t, { env: { CORS_ORIGINS: 'https://app.example' } })
  const url = await mcpUrl(app)
  const call = (origin: string) =>
    fetch(url, { method: 'POST', headers: { ...mcpHeaders, authorization: `Bearer ${tokenFor(2)}`, origin }, body: initialize })
  const rebound = await call('http://evil.example')
  t.equal(rebound.status, 403)
  t.match(await rebound.json(), { code: 'FORBIDDEN', detail: /CORS_ORIGINS/ })
  t.equal((await call('https://app.example')).status, 200, 'an origin CORS_ORIGINS lists')
  t.equal((await call(`http://localhost:${url.port}`)).status, 200, 'a page served from loopback')
})
