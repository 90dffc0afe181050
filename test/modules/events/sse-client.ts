/**
 * A Server-Sent Events reader over real HTTP, as a client would read GET /events/stream: it parses
 * `id:`, `event:` and `data:` lines into messages and counts comment lines (heartbeats).
 */
import http from 'node:http'
import type { Event } from '../../../src/contract/contract-types.ts'

export interface SseMessage {
  id: string
  event: string
  data: Event
}

export interface SseStream {
  status: number
  headers: http.IncomingHttpHeaders
  /** The body as text, for a refusal (problem+json). */
  body: Promise<string>
  messages: SseMessage[]
  comments: number
  /** Resolves once `count` messages arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<SseMessage[]>
  /** Resolves when the server ends the stream. */
  ended: Promise<void>
  /** Cuts the connection, as a client whose network drops would. */
  cut(): void
  /** Stops reading from the socket (a slow reader), or resumes. */
  pause(): void
  resume(): void
}

export function openStream(baseUrl: string, path: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${baseUrl}${path}`, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      const messages: SseMessage[] = []
      const waiters: Array<{ count: number; resolve: (m: SseMessage[]) => void }> = []
      let buffer = ''
      let comments = 0
      let text = ''
      const stream: SseStream = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        body: new Promise((done) => response.on('end', () => done(text))),
        messages,
        get comments() {
          return comments
        },
        waitFor(count, timeoutMs = 20_000) {
          if (messages.length >= count) return Promise.resolve(messages.slice(0, count))
          return new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`${messages.length} of ${count} events arrived`)), timeoutMs)
            waiters.push({
              count,
              resolve: (m) => {
                clearTimeout(timer)
                done(m)
              },
            })
          })
        },
        ended: new Promise((done) => response.on('close', () => done())),
        cut: () => request.destroy(),
        pause: () => response.pause(),
        resume: () => response.resume(),
      }
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        if (stream.status !== 200) {
          text += chunk
          return
        }
        buffer += chunk
        let end = buffer.indexOf('\n\n')
        while (end !== -1) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const fields: Record<string, string> = {}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments++
            else {
              const colon = line.indexOf(': ')
              fields[line.slice(0, colon)] = line.slice(colon + 2)
            }
          }
          if (fields.data !== undefined) messages.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) as Event })
          end = buffer.indexOf('\n\n')
        }
        for (const waiter of waiters.filter((w) => messages.length >= w.count)) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve(messages.slice(0, waiter.count))
        }
      })
      response.on('error', () => {})
      resolve(stream)
    })
    request.on('error', reject)
  })
}
