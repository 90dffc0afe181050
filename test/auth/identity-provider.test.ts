/**
 * Tokens from an identity provider (decisions §18), from a real one: oidc-provider issues Grace's
 * tokens through the client credentials grant, and every transport takes them with no JWT_SECRET
 * at all (REST, GraphQL over HTTP and WebSocket, the event stream and its tickets, MCP), before a
 * key rotation, after it and after the key it replaced is withdrawn, without a restart; and while
 * the provider is stopped, every token signed with a key it published keeps working.
 */
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { createSigner } from 'fast-jwt'
import { DEVELOPMENT_JWT_SECRET } from '../../src/config.ts'
import { build, createOrder, gql, tokenFor } from '../helper.ts'
import { client, eventually, subscriptionCount } from '../graphql/subscription-clients.ts'
import { serve, subscribe } from '../modules/events/event-helpers.ts'
import { openStream } from '../modules/events/sse-client.ts'
import { agent } from '../mcp/mcp-client.ts'
import { CLIENTS, providerKeys, signedAs, signingKey, startIdentityProvider, tokensOf } from './identity-provider.ts'

/**
 * Every transport, each with a token it has not seen (so that each verifies one itself): REST,
 * GraphQL over HTTP, a WebSocket subscription and an event stream opened with a ticket (both
 * receive the order created over REST), and an MCP tool call.
 */
async function everyTransport(t: Test, app: FastifyInstance, urls: { ws: string; http: string }, nextToken: () => Promise<string>) {
  const bearer = async () => ({ authorization: `Bearer ${await nextToken()}` })
  const orders = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: await bearer() })
  t.equal(orders.statusCode, 200, 'REST')
  t.ok(
    orders.json().data.every((order: { user_id: number }) => order.user_id === 2),
    "the caller is Grace, by the provider's user id claim",
  )
  const me = await gql(app, '{ me { databaseId } }', await bearer())
  t.same(me.json().data, { me: { databaseId: 2 } }, 'GraphQL over HTTP')

  const subscriber = client(t, urls.ws, await nextToken())
  const subscription = subscribe(subscriber, 'subscription { orderCreated { databaseId } }')
  t.ok(await eventually(() => subscriptionCount(app, 'order.created') === 1), 'WebSocket: connection_init admitted, subscribed')
  const ticket = await app.inject({ method: 'POST', url: '/api/v1/events/stream-tickets', headers: await bearer() })
  t.equal(ticket.statusCode, 201, 'a stream ticket')
  const stream = await openStream(urls.http, `/api/v1/events/stream?ticket=${encodeURIComponent(ticket.json().ticket)}`, {})
  t.teardown(() => stream.cut())
  t.equal(stream.status, 200, 'the event stream, opened with the ticket')
  const created = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], await bearer())
  t.equal(created.statusCode, 201)
  const [event] = await stream.waitFor(1)
  t.match(event?.data, { type: 'order.created', data: { id: created.json().id } }, 'the stream has the event')
  await subscription.waitFor(1)
  t.same(subscription.received[0]?.data, { orderCreated: { databaseId: created.json().id } }, 'and so has the subscription')
  stream.cut()
  await subscriber.dispose()
  t.ok(await eventually(() => subscriptionCount(app, 'order.created') === 0))

  const mcp = await agent(t, new URL(`${urls.http}/mcp`), await nextToken())
  const read = await mcp.callTool({ name: 'getOrder', arguments: { id: created.json().id } })
  t.match(read.structuredContent, { status: 200, body: { id: created.json().id, user_id: 2 } }, 'MCP')
  await mcp.close()
}

/** GET /api/v1/orders with `token`: its status and problem detail. */
async function ordersWith(app: FastifyInstance, token: string): Promise<{ status: number; detail?: string }> {
  const response = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: { authorization: `Bearer ${token}` } })
  return { status: response.statusCode, ...(response.statusCode === 200 ? {} : { detail: response.json().detail }) }
}

/** Longer than the app's JWT_JWKS_COOLDOWN below, so that the next unknown kid may fetch. */
const afterCooldown = () => sleep(30)

t.test("an OpenID provider's tokens on every transport, across a key rotation and an outage, without a restart", async (t) => {
  const { signer: first, rsa, ed, stranger } = await providerKeys()
  const provider = await startIdentityProvider(t, [first, rsa, ed])
  const app = await build(t, {
    env: {
      ...tokensOf(provider.issuer),
      // So that a rotated key is fetched as soon as a token names it (10 s by default).
      JWT_JWKS_COOLDOWN: '10ms',
    },
  })
  const urls = await serve(app)
  const providerToken = () => provider.token(CLIENTS.grace)

  const metadata = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' })
  t.same(metadata.json().authorization_servers, [provider.issuer], 'RFC 9728: agents find where to obtain a token')
  const developmentToken = createSigner({ key: DEVELOPMENT_JWT_SECRET, algorithm: 'HS256' })({
    sub: '2',
    exp: Math.floor(Date.now() / 1000) + 600,
  })
  for (const token of [tokenFor(2), developmentToken]) {
    t.match(await ordersWith(app, token), { status: 401, detail: `must be signed by ${provider.issuer} with one of RS256` }, 'no HS256')
  }

  const beforeRotation = await providerToken()
  t.same(await ordersWith(app, beforeRotation), { status: 200 })
  await t.test('before the rotation', (t) => everyTransport(t, app, urls, providerToken))

  const second = await signingKey('2026-b', 'ES256')
  await provider.restart([second, first, rsa, ed])
  await afterCooldown()
  await t.test('after the rotation: the new key is fetched when a token first names it', (t) => everyTransport(t, app, urls, providerToken))
  t.same(await ordersWith(app, beforeRotation), { status: 200 }, 'the previous key still verifies while it is published')

  // The provider withdraws the key it replaced, and from now on lets no copy of its keys be kept
  // (`no-cache`, as Keycloak before release 23 did). Once the app has fetched them again (here for a token naming
  // a key nobody publishes), a token of the withdrawn key is refused, although it was verified before.
  await provider.restart([second, rsa, ed], { jwksCacheControl: 'no-cache' })
  await afterCooldown()
  const withdrawn = `signed with a key ${provider.issuer} does not publish`
  t.match(await ordersWith(app, await signedAs(stranger, provider.issuer)), { status: 401, detail: withdrawn })
  t.match(await ordersWith(app, beforeRotation), { status: 401, detail: withdrawn }, 'the withdrawn key verifies nothing')

  // Stopped: the copy of the keys is stale (no-cache) and cannot be fetched again.
  await provider.stop()
  await t.test('the provider stopped: tokens signed with a key it published keep working', (t) =>
    everyTransport(t, app, urls, () => signedAs(second, provider.issuer)),
  )
  for (const key of [rsa, ed]) {
    t.same(await ordersWith(app, await signedAs(key, provider.issuer)), { status: 200 }, `${key.alg}, a published key`)
  }
  const requestsWhileDown = provider.jwksRequests
  t.match(await ordersWith(app, await signedAs(stranger, provider.issuer)), { status: 401, detail: withdrawn }, 'an unknown kid: 401')
  t.equal(provider.jwksRequests, requestsWhileDown)
})
