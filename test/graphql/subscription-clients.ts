/**
 * Clients for subscription tests against a listening instance: the graphql-ws library, as an
 * application would use it, and a bare graphql-transport-ws socket for what the library hides
 * (WebSocket pings, close codes, a reader that stops reading).
 */
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { once } from 'node:events'
import WebSocket from 'ws'
import { createClient, type Client } from 'graphql-ws'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'
import type { BoundedPubSub } from '../../src/events/pubsub.ts'
import { bearer, createOrder } from '../helper.ts'

type Teardown = { teardown(fn: () => unknown): void }

export async function listening(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/graphql`
}

export function client(t: Teardown, url: string, token: string | undefined): Client {
  const c = createClient({
    url,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    // Tests read a refused connection from the subscription's error sink; the default prints it.
    onNonLazyError: () => {},
    connectionParams: token ? { Authorization: `Bearer ${token}` } : {},
  })
  t.teardown(() => c.dispose())
  return c
}

export interface RawConnection {
  socket: WebSocket
  /** The messages received so far, parsed. */
  messages: Array<{ type: string; id?: string; payload?: unknown }>
  closed: Promise<{ code: number; reason: string }>
  send(message: object): void
  /** Sends connection_init with the bearer `token` and waits for the acknowledgement. */
  init(token: string): Promise<void>
  /** Resolves with the first message of `type`. */
  next(type: string): Promise<{ type: string; id?: string; payload?: unknown }>
}

export async function rawConnection(t: Teardown, url: string, options: WebSocket.ClientOptions = {}): Promise<RawConnection> {
  const socket = new WebSocket(url, 'graphql-transport-ws', options)
  t.teardown(() => socket.terminate())
  const messages: RawConnection['messages'] = []
  const waiting: Array<{ type: string; resolve: (message: RawConnection['messages'][number]) => void }> = []
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as RawConnection['messages'][number]
    messages.push(message)
    for (const waiter of waiting.filter((w) => w.type === message.type)) {
      waiting.splice(waiting.indexOf(waiter), 1)
      waiter.resolve(message)
    }
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  )
  await once(socket, 'open')
  const send = (message: object) => socket.send(JSON.stringify(message))
  const next = (type: string) => {
    const seen = messages.find((m) => m.type === type)
    return seen ? Promise.resolve(seen) : new Promise<RawConnection['messages'][number]>((resolve) => waiting.push({ type, resolve }))
  }
  return {
    socket,
    messages,
    closed,
    send,
    next,
    init: async (token) => {
      send({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } })
      await next('connection_ack')
    },
  }
}

/** Polls `condition` every 20 ms until it holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(condition: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

/** Live subscriptions to `topic` on the instance (the app's pubsub is ours, pubsub.ts). */
export function subscriptionCount(app: FastifyInstance, topic: string): number {
  return (app.graphql.pubsub as unknown as BoundedPubSub).subscriptionCount(topic)
}

/** Creates an order of one keyboard as the caller `headers` names; returns its REST id. */
async function createOneOrder(app: FastifyInstance, headers: { authorization: string }): Promise<number> {
  const response = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], headers)
  if (response.statusCode !== 201) throw new Error(`creating an order: ${response.statusCode} ${response.body}`)
  return response.json().id
}

/** Creates one of Grace's (user 2) orders, whose order.created event her subscriptions receive; returns its id. */
export async function createGracesOrder(app: FastifyInstance): Promise<string> {
  return String(await createOneOrder(app, bearer(2, 'orders:write')))
}

/** Creates an order (Grace's unless `headers` name another caller); returns its global id, as a subscription event names it. */
export async function createOrderNode(app: FastifyInstance, headers = bearer(2, 'orders:write')): Promise<string> {
  return toGlobalId('Order', await createOneOrder(app, headers))
}
