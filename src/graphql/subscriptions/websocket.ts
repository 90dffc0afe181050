/**
 * The WebSocket side of subscriptions: what Mercurius leaves to the transport.
 *
 * - Admission: the credential of `connection_init` (or of the upgrade request) is checked as the
 *   message arrives; a refused connection is closed the graphql-transport-ws way, 4401 without any
 *   credential, 4403 with one that is not valid, and never acknowledged. When the check has to wait
 *   (an identity provider's token seen for the first time, decisions §18), the messages that follow
 *   are held back, from Mercurius and from the listeners here, until it is done, so that they are
 *   handled as on a connection admitted at once.
 * - A connection lives no longer than its credential: at the token's `exp` it is closed with 4403
 *   "token expired", and its subscriptions end with it.
 * - Limits per caller (the token's subject) on this instance, decisions §13: at most
 *   `maxConnectionsPerCaller` admitted connections (a further connection_init is closed with 4430
 *   "Too many connections for this caller") and `maxSubscriptionsPerCaller` active subscriptions
 *   across them, besides `maxSubscriptionsPerConnection` on each connection. An operation is active
 *   from the client's `subscribe` until the server's `complete` or `error` for it: Mercurius answers
 *   a client's `complete` with its own once it has stopped the subscription, so whichever way an
 *   operation ends, it frees its slot exactly once; a connection that closes, however abruptly,
 *   frees its own and its operations' slots in its `close` event, once. A subscribe over either
 *   limit gets an `error` on its id (BAD_REQUEST, reason TOO_MANY_SUBSCRIPTIONS, `per` naming the
 *   limit) and the connection goes on. As the protocol
 *   says, a subscribe reusing the id of an active operation is closed with 4409, and one without a
 *   string id and query with 4400 (Mercurius would run a query sent as an object without the hook
 *   that counts it).
 * - A subscribe whose document has more than `maxTokens` tokens gets an `error` on its id
 *   (GRAPHQL_PARSE_FAILED) before Mercurius parses it, which it does without a token limit.
 * - 4408 for a connection that sends no `connection_init` in time.
 * - Keep-alive: a WebSocket ping every `keepAliveMs`; a peer that has not answered the previous
 *   ping by the next one is gone and its socket is terminated (its subscriptions end with it).
 * - Shutdown: every socket is closed with 1001 "Going Away", and whatever has not finished the
 *   closing handshake within `closeGraceMs` is terminated, so shutdown never waits on a client.
 * - A connection that closes while carrying subscriptions is one info line saying how many ended.
 */
import websocket from '@fastify/websocket'
import type { FastifyInstance } from 'fastify'
import type { GraphQLError } from 'graphql'
import type { IncomingMessage } from 'node:http'
import type { WebSocket } from 'ws'
import type { Caller } from '../../auth/caller.ts'
import type { Authentication } from '../../plugins/auth.ts'
import { ApiError, credentialRequired } from '../../errors.ts'
import { exceedsTokens, tooManyTokensMessage } from '../limits/document-tokens.ts'
import { locatedApiError } from '../errors.ts'

const CLOSE_INVALID_MESSAGE = 4400
const CLOSE_UNAUTHORIZED = 4401
const CLOSE_FORBIDDEN = 4403
const CLOSE_INIT_TIMEOUT = 4408
const CLOSE_DUPLICATE_OPERATION = 4409
/**
 * The caller already holds its most connections on this instance. graphql-transport-ws takes 4429
 * for "Too many initialisation requests", so the caller limit takes the code next to it; graphql-ws
 * retries it with backoff, which succeeds once one of the caller's connections has closed.
 */
const CLOSE_TOO_MANY_CONNECTIONS = 4430
const CLOSE_GOING_AWAY = 1001
/** The largest message a client may send (ws closes the connection with 1009 past it). */
const MAX_MESSAGE_BYTES = 1024 * 1024
/** setTimeout's longest delay: a token valid for longer is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

export interface SubscriptionTransportOptions {
  keepAliveMs: number
  initTimeoutMs: number
  closeGraceMs: number
  /** Active subscriptions one connection may carry. */
  maxSubscriptionsPerConnection: number
  /** Connections one caller (token subject) may hold on this instance. */
  maxConnectionsPerCaller: number
  /** Active subscriptions one caller may hold across its connections on this instance. */
  maxSubscriptionsPerCaller: number
  /** Tokens a subscription's document may have (GRAPHQL_MAX_TOKENS). */
  maxTokens: number
}

export interface SubscriptionSockets {
  /** The caller a connection was admitted as (undefined before connection_init), once its admission is decided. */
  callerOf(socket: WebSocket): Promise<Caller | undefined>
  /**
   * Lets Mercurius start the operation `id` of `socket`, or throws the error the client gets on it
   * instead. Mercurius' preSubscriptionParsing hook calls it, before Mercurius keeps anything for
   * the operation.
   */
  admitSubscription(socket: WebSocket, id: string): void
  /**
   * What the client sent with the operation `id`: Mercurius' subscription hooks are given the
   * parsed document but not its variables or operationName, which the limits need.
   */
  subscriptionRequest(socket: WebSocket, id: string): SubscriptionRequest | undefined
}

export interface SubscriptionRequest {
  variables: Record<string, unknown> | undefined
  operationName: string | undefined
}

interface Operation {
  /** Which limit refused this subscribe; undefined when it holds a slot. */
  refusedBy: 'connection' | 'caller' | undefined
  /**
   * The client sent `complete`. Checked when Mercurius starts the operation: a complete that came
   * before then, Mercurius would lose, and the subscription would live on.
   */
  completedByClient: boolean
  request: SubscriptionRequest
}

/** What one caller holds on this instance, across its connections. */
interface CallerUse {
  connections: number
  subscriptions: number
}

interface Connection {
  /** Set at connection_init when the credential is valid and the caller may open one more connection. */
  admitted: { caller: Caller; use: CallerUse } | undefined
  /** Operations from the client's subscribe until the server's complete or error, by id. */
  operations: Map<string, Operation>
  /** How many of them hold a slot (each counted in the caller's use too). */
  active: number
  /** Set while connection_init's credential is being checked; the messages that arrive meanwhile wait in `held`. */
  admitting: Promise<void> | undefined
  held: unknown[][]
  heldBytes: number
}

interface ClientMessage {
  type: string
  id?: unknown
  payload?: unknown
}

function parseMessage(data: unknown): ClientMessage | undefined {
  let message: unknown
  try {
    message = JSON.parse(String(data))
  } catch {
    return undefined
  }
  if (typeof message !== 'object' || message === null || !('type' in message) || typeof message.type !== 'string') return undefined
  return message as ClientMessage
}

function initAuthorization(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined
  const value = (payload as Record<string, unknown>).Authorization ?? (payload as Record<string, unknown>).authorization
  return value === undefined ? undefined : String(value)
}

function isSubscribePayload(payload: unknown): payload is { query: string } {
  return typeof payload === 'object' && payload !== null && 'query' in payload && typeof payload.query === 'string'
}

/** A subscribe the connection does not take, as the `error` message on its id. */
function refused(
  code: 'BAD_REQUEST' | 'TOO_MANY_SUBSCRIPTIONS' | 'GRAPHQL_PARSE_FAILED',
  message: string,
  extensions: Record<string, unknown> = {},
): GraphQLError {
  return locatedApiError(new ApiError(code, message, { extensions }))
}

/**
 * Calls `onSent` with every text message the server sends on `socket` except `next` (Mercurius
 * writes `type` first), which are the many and say nothing about an operation ending.
 */
function observeSent(socket: WebSocket, onSent: (message: string) => void): void {
  const send = socket.send
  socket.send = function sendObserved(this: WebSocket, data: unknown, ...rest: unknown[]) {
    Reflect.apply(send, this, [data, ...rest])
    if (typeof data === 'string' && !data.startsWith('{"type":"next"')) onSent(data)
  }
}

/**
 * A subscribe as the protocol takes it, or the close it calls for: 4400 without a string id and a
 * query (Mercurius would run a query sent as an object without the hook that counts it), 4409 for
 * the id of an active operation.
 */
function checkSubscribe(
  connection: Connection,
  { id, payload }: ClientMessage,
): { id: string; payload: { query: string } } | { close: { code: number; reason: string } } {
  if (typeof id !== 'string' || id === '' || !isSubscribePayload(payload)) {
    return { close: { code: CLOSE_INVALID_MESSAGE, reason: 'Invalid message received' } }
  }
  if (connection.operations.has(id)) {
    const reason = `Subscriber for ${id} already exists`
    return {
      close: {
        code: CLOSE_DUPLICATE_OPERATION,
        reason: Buffer.byteLength(reason) <= 123 ? reason : 'Subscriber for that id already exists',
      },
    }
  }
  return { id, payload }
}

/**
 * Mercurius parses a subscribe's document as soon as it handles the message, without graphql's
 * token limit (document-tokens.ts), and the document may be as long as a message (1 MiB; parsing
 * that took up to 1.7 s). So a subscribe whose document has more than `maxTokens` tokens is
 * answered here, with an `error` on its id (or the close the protocol calls for), and never
 * passed on, to Mercurius or to the listeners below: a message already handed to Mercurius is
 * parsed even after the connection is closed. Before `connection_init` is accepted, Mercurius
 * parses nothing, and every message goes on as usual.
 */
function refuseLongDocuments(socket: WebSocket, connection: Connection, maxTokens: number): void {
  const emit = socket.emit
  socket.emit = function emitBounded(this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
    const [data] = args
    // A document of more than maxTokens tokens has more than maxTokens characters.
    if (event === 'message' && connection.admitted !== undefined && Buffer.isBuffer(data) && data.length > maxTokens) {
      const message = parseMessage(data)
      if (message?.type === 'subscribe' && isSubscribePayload(message.payload) && exceedsTokens(message.payload.query, maxTokens)) {
        const checked = checkSubscribe(connection, message)
        if ('close' in checked) socket.close(checked.close.code, checked.close.reason)
        else {
          const error = refused('GRAPHQL_PARSE_FAILED', tooManyTokensMessage(maxTokens), { maxTokens })
          socket.send(JSON.stringify({ type: 'error', id: checked.id, payload: [error] }))
        }
        return true
      }
    }
    return Reflect.apply(emit, this, [event, ...args])
  }
}

/**
 * Holds back the messages that arrive while the connection's credential is being checked (see
 * `admitting`); they are emitted again, in order, once it is decided. Installed last, so that a
 * message emitted again passes every check a message arriving then would. A client has no reason
 * to send much before its connection_ack (the protocol has it wait for it): past one message's
 * worth of bytes, the connection is closed rather than held in memory.
 */
function holdWhileAdmitting(socket: WebSocket, connection: Connection): void {
  const emit = socket.emit
  socket.emit = function emitWhenAdmitted(this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' && connection.admitting !== undefined) {
      const [data] = args
      connection.heldBytes += Buffer.isBuffer(data) ? data.length : MAX_MESSAGE_BYTES
      if (connection.heldBytes > MAX_MESSAGE_BYTES) socket.close(CLOSE_INVALID_MESSAGE, 'Too much sent before connection_ack')
      else connection.held.push(args)
      return true
    }
    return Reflect.apply(emit, this, [event, ...args])
  }
}

/** Registers @fastify/websocket for Mercurius with the behaviour above. */
export async function registerSubscriptionTransport(
  app: FastifyInstance,
  options: SubscriptionTransportOptions,
): Promise<SubscriptionSockets> {
  const connections = new WeakMap<WebSocket, Connection>()
  const alive = new WeakSet<WebSocket>()
  /** By token subject; an entry goes when its caller holds nothing any more. */
  const callers = new Map<string, CallerUse>()

  await app.register(websocket, {
    // Client messages are small GraphQL documents.
    options: { maxPayload: MAX_MESSAGE_BYTES },
    preClose: async function goingAway(this: FastifyInstance) {
      const sockets = [...this.websocketServer.clients]
      const closed = sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.readyState === socket.CLOSED) return resolve()
            socket.once('close', () => resolve())
            socket.close(CLOSE_GOING_AWAY, 'Server shutting down')
          }),
      )
      const grace = new Promise<void>((resolve) => setTimeout(resolve, options.closeGraceMs).unref())
      await Promise.race([Promise.all(closed), grace])
      for (const socket of sockets) if (socket.readyState !== socket.CLOSED) socket.terminate()
      await new Promise<void>((resolve) => this.websocketServer.close(() => resolve()))
    },
  })

  app.websocketServer.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const connection: Connection = {
      admitted: undefined,
      operations: new Map(),
      active: 0,
      admitting: undefined,
      held: [],
      heldBytes: 0,
    }
    connections.set(socket, connection)
    refuseLongDocuments(socket, connection, options.maxTokens)
    holdWhileAdmitting(socket, connection)
    alive.add(socket)
    socket.on('pong', () => alive.add(socket))
    const initTimer = setTimeout(() => socket.close(CLOSE_INIT_TIMEOUT, 'Connection initialisation timeout'), options.initTimeoutMs)
    let expiryTimer: NodeJS.Timeout | undefined
    const closeAtExpiry = (expiresAt: number) => {
      const remaining = expiresAt - Date.now()
      expiryTimer =
        remaining > MAX_TIMER_MS
          ? setTimeout(() => closeAtExpiry(expiresAt), MAX_TIMER_MS)
          : setTimeout(() => socket.close(CLOSE_FORBIDDEN, 'token expired'), remaining)
    }
    socket.once('close', (code) => {
      clearTimeout(initTimer)
      clearTimeout(expiryTimer)
      const { admitted } = connection
      if (!admitted) return
      // Runs once per socket, whatever closed it (the client, a cut, the server); the operations
      // are forgotten, so that Mercurius' late complete messages to the closed socket free nothing.
      const ended = connection.active
      connection.active = 0
      connection.operations.clear()
      admitted.use.connections--
      admitted.use.subscriptions -= ended
      if (admitted.use.connections === 0 && admitted.use.subscriptions === 0) callers.delete(admitted.caller.subject)
      if (ended > 0) {
        app.log.info(
          { caller: admitted.caller.subject, closeCode: code, subscriptions: ended },
          `WebSocket connection closed; ${ended} subscription${ended === 1 ? '' : 's'} ended with it`,
        )
      }
    })

    let initialised = false
    const decide = ({ caller, error }: Authentication) => {
      // A connection its client closed while its credential was being checked is not admitted.
      if (socket.readyState !== socket.OPEN) return
      if (caller) {
        const use = callers.get(caller.subject) ?? { connections: 0, subscriptions: 0 }
        if (use.connections >= options.maxConnectionsPerCaller) {
          socket.close(CLOSE_TOO_MANY_CONNECTIONS, 'Too many connections for this caller')
          return
        }
        use.connections++
        callers.set(caller.subject, use)
        connection.admitted = { caller, use }
        closeAtExpiry(caller.expiresAt)
      } else {
        const refusal = credentialRequired(error, 'connection_init')
        if (error !== undefined) socket.close(CLOSE_FORBIDDEN, `Forbidden: ${refusal.detail}`.slice(0, 123))
        else socket.close(CLOSE_UNAUTHORIZED, `Unauthorized: ${refusal.detail}`.slice(0, 123))
      }
    }
    const admit = (payload: unknown) => {
      initialised = true
      clearTimeout(initTimer)
      // The connection_init credential wins over the upgrade request's header.
      const authentication = app.authenticate(initAuthorization(payload) ?? request.headers.authorization)
      if (!(authentication instanceof Promise)) return decide(authentication)
      connection.admitting = authentication.then((result) => {
        decide(result)
        connection.admitting = undefined
        const held = connection.held.splice(0)
        if (socket.readyState === socket.OPEN) for (const args of held) socket.emit('message', ...args)
      })
    }

    const subscribe = ({ use }: { use: CallerUse }, message: ClientMessage) => {
      const checked = checkSubscribe(connection, message)
      if ('close' in checked) {
        socket.close(checked.close.code, checked.close.reason)
        return
      }
      const { id, payload } = checked
      const refusedBy =
        connection.active >= options.maxSubscriptionsPerConnection
          ? 'connection'
          : use.subscriptions >= options.maxSubscriptionsPerCaller
            ? 'caller'
            : undefined
      if (refusedBy === undefined) {
        connection.active++
        use.subscriptions++
      }
      const { variables, operationName } = payload as { variables?: unknown; operationName?: unknown }
      const request: SubscriptionRequest = {
        variables:
          typeof variables === 'object' && variables !== null && !Array.isArray(variables)
            ? (variables as Record<string, unknown>)
            : undefined,
        operationName: typeof operationName === 'string' ? operationName : undefined,
      }
      connection.operations.set(id, { refusedBy, completedByClient: false, request })
    }

    // Runs as each message arrives, before Mercurius (which queues messages) handles it.
    socket.on('message', (data) => {
      const message = parseMessage(data)
      if (!message) return
      if (!initialised) {
        if (message.type === 'connection_init') admit(message.payload)
        return
      }
      const { admitted } = connection
      if (!admitted) return
      if (message.type === 'subscribe') subscribe(admitted, message)
      else if (message.type === 'complete' && typeof message.id === 'string') {
        const operation = connection.operations.get(message.id)
        if (operation) operation.completedByClient = true
      }
    })

    observeSent(socket, (sent) => {
      // Once the socket is closing, Mercurius ends its operations and sends their completes to no
      // one; the close frees their slots with the rest, so that they count among those that ended.
      if (socket.readyState !== socket.OPEN) return
      const message = parseMessage(sent)
      if ((message?.type !== 'complete' && message?.type !== 'error') || typeof message.id !== 'string') return
      const operation = connection.operations.get(message.id)
      if (!operation) return
      connection.operations.delete(message.id)
      if (operation.refusedBy !== undefined) return
      connection.active--
      // An operation exists only on an admitted connection.
      if (connection.admitted) connection.admitted.use.subscriptions--
      // Mercurius 16 keeps a failed subscription's context (about 8 kB) until the connection
      // closes, so failing subscribes would grow memory without holding a slot. A complete for the
      // id makes it drop them, as a client's complete would; it arrives after whatever the client
      // sent before, and nothing can reuse the id in between.
      if (message.type === 'error') socket.emit('message', Buffer.from(JSON.stringify({ id: message.id, type: 'complete' })), false)
    })
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

  return {
    async callerOf(socket) {
      const connection = connections.get(socket)
      await connection?.admitting
      return connection?.admitted?.caller
    },
    subscriptionRequest: (socket, id) => connections.get(socket)?.operations.get(id)?.request,
    admitSubscription(socket, id) {
      const operation = connections.get(socket)?.operations.get(id)
      if (socket.readyState !== socket.OPEN) throw refused('BAD_REQUEST', 'The connection is closing.')
      // Every subscribe Mercurius handles went through the message listener above first.
      if (!operation) throw refused('BAD_REQUEST', 'The connection did not take this operation.')
      if (operation.refusedBy === 'connection') {
        throw refused(
          'TOO_MANY_SUBSCRIPTIONS',
          `This connection already carries ${options.maxSubscriptionsPerConnection} subscriptions, the most one connection may: complete one or open another connection.`,
          { limit: options.maxSubscriptionsPerConnection, per: 'connection' },
        )
      }
      if (operation.refusedBy === 'caller') {
        throw refused(
          'TOO_MANY_SUBSCRIPTIONS',
          `This caller already holds ${options.maxSubscriptionsPerCaller} active subscriptions on this instance, the most one caller may: complete one first.`,
          { limit: options.maxSubscriptionsPerCaller, per: 'caller' },
        )
      }
      if (operation.completedByClient) throw refused('BAD_REQUEST', 'The client completed this operation before it started.')
    },
  }
}
