import { connect, type Socket } from 'node:net'
import t from 'tap'
import { build } from '../helper.ts'

/** The first whole HTTP/1.1 response read from the socket: status, headers (lower-cased) and body. */
function readResponse(socket: Socket): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    let received = ''
    const parse = () => {
      const end = received.indexOf('\r\n\r\n')
      if (end < 0) return
      const [statusLine = '', ...lines] = received.slice(0, end).split('\r\n')
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      )
      const body = received.slice(end + 4)
      if (Buffer.byteLength(body) < Number(headers['content-length'] ?? 0)) return
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body })
    }
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      received += chunk
      parse()
    })
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`connection closed after ${JSON.stringify(received)}`)))
  })
}

t.test('a request that arrives while the app closes gets the catalogue 503 problem with Retry-After, not a bare 503', async (t) => {
  const app = await build(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the app listens on no port')
  const socket = connect(address.port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await new Promise((resolve) => socket.once('connect', resolve))
  const answered = readResponse(socket)
  // The request has begun, so its connection is not idle: closing waits for its answer rather than
  // cutting it off. It ends after the app started to close.
  socket.write('GET /api/v1/orders HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: closing-1\r\n')
  await new Promise((resolve) => setTimeout(resolve, 50))
  const closed = app.close()
  while (!app.draining) await new Promise((resolve) => setTimeout(resolve, 5))
  socket.write('\r\n')
  const answer = await answered
  await closed
  t.equal(answer.status, 503)
  t.match(answer.headers['content-type'], /^application\/problem\+json/)
  t.equal(answer.headers['retry-after'], '1')
  t.equal(answer.headers.connection, 'close')
  t.equal(answer.headers['x-request-id'], 'closing-1')
  t.equal(answer.headers['x-content-type-options'], 'nosniff', 'with the security headers of every answer')
  const problem = JSON.parse(answer.body) as { status: number; code: string; requestId: string }
  t.equal(problem.status, 503)
  t.equal(problem.code, 'SERVICE_UNAVAILABLE')
  t.equal(problem.requestId, 'closing-1')
})
