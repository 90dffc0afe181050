/**
 * A TCP proxy between one server and PostgreSQL that counts the statements the server sends:
 * frontend `Query` ('Q', simple protocol) and `Execute` ('E', extended protocol: pg sends
 * Parse/Bind/Describe/Execute/Sync per parameterized query) messages. BEGIN and COMMIT count too:
 * they are round trips. Bytes pass through unchanged; only message headers are read.
 */
import net from 'node:net'

const SSL_REQUEST = 80877103
const GSS_ENCRYPTION_REQUEST = 80877104
const QUERY = 0x51
const EXECUTE = 0x45

export interface StatementCounter {
  port: number
  statements(): number
  close(): Promise<void>
}

/** Counts the messages of one client connection as its bytes go by, across chunk boundaries. */
function createMessageCounter(onStatement: () => void): (chunk: Buffer) => void {
  // The startup message (and an SSL or GSS request before it) has no type byte: length, then code.
  let startup = true
  const header = Buffer.alloc(8)
  let headerFilled = 0
  let skip = 0
  return (chunk) => {
    let offset = 0
    while (offset < chunk.length) {
      if (skip > 0) {
        const taken = Math.min(skip, chunk.length - offset)
        skip -= taken
        offset += taken
        continue
      }
      const headerSize = startup ? 8 : 5
      const taken = Math.min(headerSize - headerFilled, chunk.length - offset)
      chunk.copy(header, headerFilled, offset, offset + taken)
      headerFilled += taken
      offset += taken
      if (headerFilled < headerSize) continue
      headerFilled = 0
      if (startup) {
        const length = header.readInt32BE(0)
        const code = header.readInt32BE(4)
        skip = length - 8
        if (code !== SSL_REQUEST && code !== GSS_ENCRYPTION_REQUEST) startup = false
      } else {
        const type = header[0]
        if (type === QUERY || type === EXECUTE) onStatement()
        skip = header.readInt32BE(1) - 4
      }
    }
  }
}

export async function startStatementCounter(upstream: { host: string; port: number }): Promise<StatementCounter> {
  let statements = 0
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    // No Nagle on either leg, as pg and PostgreSQL have none on theirs: with it, a result larger
    // than one of PostgreSQL's 8 kB sends waited for the client's delayed ACK (up to 40 ms) before
    // its last piece was passed on, which made the largest reads latency-bound in the bench.
    const server = net.connect({ port: upstream.port, host: upstream.host, noDelay: true })
    client.setNoDelay(true)
    sockets.add(client).add(server)
    const count = createMessageCounter(() => void statements++)
    client.on('data', (chunk: Buffer) => {
      count(chunk)
      if (!server.write(chunk)) client.pause()
    })
    server.on('drain', () => client.resume())
    server.pipe(client)
    const end = () => {
      client.destroy()
      server.destroy()
      sockets.delete(client)
      sockets.delete(server)
    }
    client.on('close', end).on('error', end)
    server.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the statement counter has no TCP address')
  return {
    port: address.port,
    statements: () => statements,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
