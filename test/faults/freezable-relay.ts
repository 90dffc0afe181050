import { once } from 'node:events'
import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP relay to PostgreSQL that can stop passing the server's answers on, as a frozen server or
 * a silent network would: what the client sends still arrives, nothing comes back until thawed.
 */
export async function freezableRelay(t: { teardown(fn: () => unknown): void }, target: URL) {
  let frozen = false
  let trigger: { text: string; frozen: () => void } | undefined
  const held: Array<() => void> = []
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect({ host: target.hostname, port: Number(target.port || 5432) })
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk)
      if (trigger && chunk.includes(trigger.text)) {
        frozen = true
        trigger.frozen()
        trigger = undefined
      }
    })
    client.on('end', () => upstream.end())
    const deliver = (action: () => void) => (frozen ? held.push(action) : action())
    upstream.on('data', (chunk: Buffer) => deliver(() => client.write(chunk)))
    upstream.on('end', () => deliver(() => client.end()))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String((server.address() as { port: number }).port)
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true
    },
    /**
     * Freezes once a client sends `text` (a statement's SQL): that statement reaches the server,
     * its answer does not. Resolves when frozen.
     */
    freezeWhenSent: (text: string) =>
      new Promise<void>((resolve) => {
        trigger = { text, frozen: resolve }
      }),
    thaw: () => {
      frozen = false
      for (const action of held.splice(0)) action()
    },
  }
}
