/** A real webhook receiver for tests: node:http on 127.0.0.1, recording every request it gets; and registering an endpoint for it. */
import type { FastifyInstance } from 'fastify'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { bearer } from '../../helper.ts'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

export type Behaviour = (received: Received, response: ServerResponse) => void

export const answer =
  (status: number): Behaviour =>
  (_received, response) => {
    response.statusCode = status
    response.end()
  }

/** Never answers: the sender's timeout must cut it off. */
export const hang: Behaviour = () => {}

export async function startReceiver(t: { teardown(fn: () => unknown): void }, initial: Behaviour = answer(204)) {
  const received: Received[] = []
  let behaviour = initial
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      received.push(entry)
      behaviour(entry, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  t.teardown(close)
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    setBehaviour(next: Behaviour) {
      behaviour = next
    },
    close,
    /** Waits until `count` requests arrived (or fails after `ms`). */
    async waitFor(count: number, ms = 10_000): Promise<Received[]> {
      const deadline = Date.now() + ms
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests, expected ${count}`)
        await sleep(20)
      }
      return received
    },
  }
}

/** Registers a webhook endpoint for `url` as `user` (201 or it throws): its id and signing secret. */
export async function createEndpoint(app: FastifyInstance, url: string, user = 2, types?: string[]) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    headers: bearer(user),
    payload: { url, ...(types ? { types } : {}) },
  })
  if (response.statusCode !== 201) throw new Error(`${response.statusCode} ${response.body}`)
  return response.json<{ id: number; secret: string }>()
}
