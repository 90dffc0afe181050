/**
 * The WebSocket side of subscriptions: what Mercurius leaves to the transport.
 *
 * - Admission: the credential of `connection_init` (or of the upgrade request) is checked as the
 *   message arrives; a refused connection is closed the graphql-transport-ws way, 4401 without any
 *   credential, 4403 with one that is not valid, and never acknowledged.
 * - 4408 for a connection that sends no `connection_init` in time.
 * - Keep-alive: a WebSocket ping every `keepAliveMs`; a peer that has not answered the previous
 *   ping by the next one is gone and its socket is terminated (its subscriptions end with it).
 * - Shutdown: every socket is closed with 1001 "Going Away", and whatever has not finished the
 *   closing handshake within `closeGraceMs` is terminated, so shutdown never waits on a client.
 */
import websocket from '@fastify/websocket'
import type { FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { WebSocket } from 'ws'
import type { Caller } from '../auth/caller.ts'

const CLOSE_UNAUTHORIZED = 4401
const CLOSE_FORBIDDEN = 4403
const CLOSE_INIT_TIMEOUT = 4408
const CLOSE_GOING_AWAY = 1001

export interface SubscriptionTransportOptions {
  keepAliveMs: number
  initTimeoutMs: number
  closeGraceMs: number
}

export interface SubscriptionSockets {
  /** The caller a connection was admitted as (undefined before connection_init). */
  callerOf(socket: WebSocket): Caller | undefined
}

function initPayloadAuthorization(message: unknown): { isInit: boolean; authorization?: string } {
  let data: unknown
  try {
    data = JSON.parse(String(message))
  } catch {
    return { isInit: false }
  }
  if (typeof data !== 'object' || data === null || (data as { type?: unknown }).type !== 'connection_init') return { isInit: false }
  const payload = (data as { payload?: unknown }).payload
  if (typeof payload !== 'object' || payload === null) return { isInit: true }
  const value = (payload as Record<string, unknown>).Authorization ?? (payload as Record<string, unknown>).authorization
  return { isInit: true, authorization: value === undefined ? undefined : String(value) }
}

/** Registers @fastify/websocket for Mercurius with the behaviour above. */
export async function registerSubscriptionTransport(app: FastifyInstance, options: SubscriptionTransportOptions): Promise<SubscriptionSockets> {
  const admitted = new WeakMap<WebSocket, Caller>()
  const alive = new WeakSet<WebSocket>()

  await app.register(websocket, {
    // Client messages are small GraphQL documents.
    options: { maxPayload: 1024 * 1024 },
    preClose: async function goingAway(this: FastifyInstance) {
      const sockets = [...this.websocketServer.clients]
      const closed = sockets.map((socket) => new Promise<void>((resolve) => {
        if (socket.readyState === socket.CLOSED) return resolve()
        socket.once('close', () => resolve())
        socket.close(CLOSE_GOING_AWAY, 'Server shutting down')
      }))
      const grace = new Promise<void>((resolve) => setTimeout(resolve, options.closeGraceMs).unref())
      await Promise.race([Promise.all(closed), grace])
      for (const socket of sockets) if (socket.readyState !== socket.CLOSED) socket.terminate()
      await new Promise<void>((resolve) => this.websocketServer.close(() => resolve()))
    },
  })

  app.websocketServer.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    alive.add(socket)
    socket.on('pong', () => alive.add(socket))
    const initTimer = setTimeout(() => socket.close(CLOSE_INIT_TIMEOUT, 'Connection initialisation timeout'), options.initTimeoutMs)
    const admit = (message: unknown) => {
      const { isInit, authorization } = initPayloadAuthorization(message)
      if (!isInit) return
      clearTimeout(initTimer)
      socket.off('message', admit)
      // The connection_init credential wins over the upgrade request's header.
      const { caller, error } = app.authenticate(authorization ?? request.headers.authorization)
      if (caller) admitted.set(socket, caller)
      else if (error !== undefined) socket.close(CLOSE_FORBIDDEN, `Forbidden: ${error}`.slice(0, 123))
      else socket.close(CLOSE_UNAUTHORIZED, 'Unauthorized: send {"Authorization": "Bearer <token>"} in connection_init')
    }
    socket.on('message', admit)
    socket.once('close', () => clearTimeout(initTimer))
  })

  const heartbeat = setInterval(() => {
    for (const socket of app.websocketServer.clients) {
      if (!alive.has(socket)) {
        socket.terminate()
        continue
      }
      alive.delete(socket)
      socket.ping()
    }
  }, options.keepAliveMs)
  heartbeat.unref()
  app.addHook('onClose', async () => clearInterval(heartbeat))

  return { callerOf: (socket) => admitted.get(socket) }
}
