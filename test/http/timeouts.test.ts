/**
 * The HTTP timeouts of decisions §12 on a listening instance, driven through raw sockets so that
 * the client can misbehave: a body or headers trickled a byte at a time are cut off, an idle
 * keep-alive connection is closed, and an upgraded WebSocket outlives the request timeout. The
 * app runs with small timeouts; each assertion only says "cut before a generous deadline".
 */
import t from 'tap'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { build, tokenFor } from '../helper.ts'
import { listening, rawConnection } from '../graphql/subscription-clients.ts'

const TIMEOUTS = { HTTP_HEADERS_TIMEOUT: '300ms', HTTP_REQUEST_TIMEOUT: '600ms', HTTP_KEEP_ALIVE_TIMEOUT: '300ms' }
/** Far longer than any of the timeouts above plus Node's 1 s checking interval. */
const DEADLINE_MS = 10_000
const TRICKLE_EVERY_MS = 250

type TestContext = Parameters<typeof build>[0]

interface Peer {
  socket: Socket
  /** Everything the server sent. */
  received(): string
  /** Resolves true when the server closed the connection before the deadline, false after it. */
  closedBeforeDeadline: Promise<boolean>
}

async function open(t: TestContext, app: FastifyInstance): Promise<Peer> {
  const { port } = app.server.address() as AddressInfo
  const socket = connect({ host: '127.0.0.1', port })
  t.teardown(() => socket.destroy())
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  // A reset after the server's 408 is a close too.
  socket.on('error', () => {})
  const closedBeforeDeadline = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), DEADLINE_MS)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
  return { socket, received: () => Buffer.concat(chunks).toString('latin1'), closedBeforeDeadline }
}

/** Writes `bytes` one at a time until they run out or the socket closes; returns how many went. */
function trickle(socket: Socket, bytes: string): { sent(): number; stop(): void } {
  let sent = 0
  const timer = setInterval(() => {
    if (socket.destroyed || sent >= bytes.length) return clearInterval(timer)
    socket.write(bytes[sent]!)
    sent += 1
  }, TRICKLE_EVERY_MS)
  return { sent: () => sent, stop: () => clearInterval(timer) }
}

async function listeningApp(t: TestContext): Promise<FastifyInstance> {
  const app = await build(t, { env: TIMEOUTS })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return app
}

t.test('a body trickled a byte at a time is cut off with 408 before it is complete', async (t) => {
  const app = await listeningApp(t)
  const peer = await open(t, app)
  const body = JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }).padEnd(100, ' ')
  // An authenticated request the server accepts and then waits on: its body arrives too slowly.
  peer.socket.write(
    `POST /api/v1/orders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${tokenFor(2)}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
  )
  const dribble = trickle(peer.socket, body)
  t.teardown(dribble.stop)
  t.ok(await peer.closedBeforeDeadline, 'the server closed the connection')
  t.ok(dribble.sent() < body.length, `only ${dribble.sent()} of ${body.length} body bytes had been sent`)
  t.match(peer.received(), /^HTTP\/1\.1 408 /, 'the answer is 408 Request Timeout')
})

t.test('headers that never finish are cut off with 408', async (t) => {
  const app = await listeningApp(t)
  const peer = await open(t, app)
  peer.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n')
  const headerLines = 'X-Slow: a\r\n'.repeat(100)
  const dribble = trickle(peer.socket, headerLines)
  t.teardown(dribble.stop)
  t.ok(await peer.closedBeforeDeadline, 'the server closed the connection')
  t.ok(dribble.sent() < headerLines.length, 'the headers were still unfinished')
  t.match(peer.received(), /^HTTP\/1\.1 408 /, 'the answer is 408 Request Timeout')
})

t.test('an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const app = await listeningApp(t)
  const peer = await open(t, app)
  peer.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n')
  t.ok(await peer.closedBeforeDeadline, 'the server closed the idle connection')
  const response = peer.received()
  t.match(response, /^HTTP\/1\.1 200 /, 'the request itself was answered')
  t.match(response, /\r\nconnection: keep-alive\r\n/i, 'and the connection was kept alive after it, not closed with the answer')
})

t.test('an upgraded WebSocket connection outlives the request timeout', async (t) => {
  const app = await build(t, { env: TIMEOUTS })
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(2))
  // Several request timeouts and checking intervals pass on the open connection.
  await new Promise((resolve) => setTimeout(resolve, 2500))
  connection.send({ type: 'ping' })
  t.same(await connection.next('pong'), { type: 'pong' }, 'the connection still answers')
  t.equal(connection.socket.readyState, connection.socket.OPEN)
})
