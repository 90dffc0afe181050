/**
 * Load on the event log: STREAMS Server-Sent Event streams (SLOW of them stop reading
 * while the events are written, then read again) and EVENTS commits. Reports whether every stream
 * received every event once and in order, commit → SSE received latency (p50/p99, per event per
 * stream), the process's peak RSS and heap, and the event loop's longest block.
 *
 *   npm run events:load                     # embedded PGlite (in memory)
 *   DATABASE_URL=postgres://… npm run events:load
 *
 * Clients run in the server's process (their parsing is in the numbers); nothing here is asserted.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { buildApp } from '../src/app.ts'
import { sampleMemoryPeaks } from './memory-peaks.ts'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { loadConfig } from '../src/config.ts'

const STREAMS = Number(process.env.STREAMS ?? 50)
const SLOW = Number(process.env.SLOW ?? 5)
const EVENTS = Number(process.env.EVENTS ?? 1000)
const SECRET = 'load-secret-0123456789abcdef0123456789abcdef'

const config = loadConfig({
  NODE_ENV: 'production',
  JWT_SECRET: SECRET,
  DATABASE_URL: process.env.DATABASE_URL ?? 'memory://',
  SEED: 'true',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '1000000',
  EVENTS_STREAM_MAX_PER_CALLER: '100',
})
const app = await buildApp({ config })
await app.listen({ host: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
const sign = createTokenSigner(SECRET)
const admin = (sub: number) => `Bearer ${sign({ sub: String(sub), scope: 'admin' }, 3600)}`
const writer = `Bearer ${sign({ sub: '2', scope: 'articles:write' }, 3600)}`

const article = await app.inject({
  method: 'POST',
  url: '/api/v1/articles',
  headers: { authorization: writer },
  payload: { title: 'Load', body: 'x' },
})
const articleId = article.json().id as number
// Let the article's own event pass before the streams start.
await new Promise((resolve) => setTimeout(resolve, 1500))

/** comment id → when its commit was answered. */
const committedAt = new Map<number, number>()
const latencies: number[] = []
interface Reader {
  ids: number[]
  response?: http.IncomingMessage
}
const readers: Reader[] = []

await Promise.all(
  Array.from({ length: STREAMS }, (_, n) => {
    // The first SLOW readers stop reading during the writes: their latency is their pause, not the server's.
    const measured = n >= SLOW
    const reader: Reader = { ids: [] }
    readers.push(reader)
    return new Promise<void>((resolve, reject) => {
      const request = http.get(
        `${base}/api/v1/events/stream?types=comment.added`,
        { headers: { authorization: admin(1000 + n), accept: 'text/event-stream' } },
        (response) => {
          reader.response = response
          let buffer = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => {
            buffer += chunk
            let end = buffer.indexOf('\n\n')
            while (end !== -1) {
              const block = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              const data = block.split('\n').find((line) => line.startsWith('data: '))
              if (data) {
                const id = (JSON.parse(data.slice(6)) as { data: { id: number } }).data.id
                reader.ids.push(id)
                const committed = committedAt.get(id)
                if (measured && committed !== undefined) latencies.push(performance.now() - committed)
              }
              end = buffer.indexOf('\n\n')
            }
          })
          resolve()
        },
      )
      request.on('error', reject)
    })
  }),
)
const slow = readers.slice(0, SLOW)
for (const reader of slow) reader.response?.pause()

const loop = monitorEventLoopDelay({ resolution: 10 })
loop.enable()
const startRss = process.memoryUsage().rss
const sampler = sampleMemoryPeaks()

const started = performance.now()
const written: number[] = []
for (let n = 0; n < EVENTS; n++) {
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/articles/${articleId}/comments`,
    headers: { authorization: writer },
    payload: { body: `comment ${n}` },
  })
  const id = response.json().id as number
  committedAt.set(id, performance.now())
  written.push(id)
}
const writeMs = performance.now() - started
for (const reader of slow) reader.response?.resume()

const fast = readers.slice(SLOW)
const deadline = Date.now() + 120_000
while (readers.some((reader) => reader.ids.length < EVENTS) && Date.now() < deadline)
  await new Promise((resolve) => setTimeout(resolve, 50))
loop.disable()
const { heapPeak: peakHeap, rssPeak: peakRss } = sampler.stop()

const expected = written.join(',')
const complete = readers.filter((reader) => reader.ids.join(',') === expected).length
const fastLatencies = latencies.slice().sort((a, b) => a - b)
const quantile = (q: number) => fastLatencies[Math.min(fastLatencies.length - 1, Math.floor(q * fastLatencies.length))] ?? Number.NaN
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
console.log(
  JSON.stringify(
    {
      database: process.env.DATABASE_URL ? 'postgresql' : 'pglite',
      streams: STREAMS,
      slowStreams: SLOW,
      events: EVENTS,
      streamsWithEveryEventInOrder: `${complete}/${STREAMS}`,
      writesPerSecond: Math.round((EVENTS / writeMs) * 1000),
      commitToSseMs: { p50: Number(quantile(0.5).toFixed(1)), p99: Number(quantile(0.99).toFixed(1)), samples: fastLatencies.length },
      fastStreamsOnly: fast.length,
      rss: { start: mb(startRss), peak: mb(peakRss) },
      peakHeap: mb(peakHeap),
      eventLoopMaxBlockMs: Number((loop.max / 1e6).toFixed(1)),
      eventLoopP99Ms: Number((loop.percentile(99) / 1e6).toFixed(1)),
    },
    null,
    2,
  ),
)
for (const reader of readers) reader.response?.destroy()
await app.close()
process.exit(complete === STREAMS ? 0 : 1)
