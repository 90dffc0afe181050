/**
 * Webhook load: 1,000 events to 20 endpoints through the whole path (REST write →
 * outbox → relay → worker → signed POST to a real node:http receiver), then reports
 * - whether anything was lost or duplicated (every receiver must get every event exactly once, in order),
 * - memory (heap and RSS: at start, peak while delivering, at the end),
 * - event-loop block (perf_hooks monitorEventLoopDelay: p99 and max),
 * - commit → webhook received latency p50/p99 (from the write's answer, which comes after its commit),
 *   for the burst (mostly time queued: an endpoint's deliveries go one at a time, in order) and for
 *   50 paced events afterwards (the latency of a quiet system).
 * The receivers run in this process too, so the loop numbers include their work. A measurement for
 * the notes, not a test: nothing here asserts a time.
 *   node --import tsx scripts/webhook-load.ts [--events 1000] [--endpoints 20]   (DATABASE_URL=postgres://… to use PostgreSQL)
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.ts'
import { sampleMemoryPeaks } from './memory-peaks.ts'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { loadConfig } from '../src/config.ts'

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000' }, endpoints: { type: 'string', default: '20' } } })
const EVENTS = Number(values.events)
const ENDPOINTS = Number(values.endpoints)
const WRITERS = 10

const secret = 'load-secret-0123456789abcdef0123456789abcdef'
const config = loadConfig({
  NODE_ENV: 'production',
  JWT_SECRET: secret,
  DATABASE_URL: process.env.DATABASE_URL || 'memory://',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '1000000',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_CONCURRENCY: String(ENDPOINTS),
})
const sign = createTokenSigner(secret)
const headers = { authorization: `Bearer ${sign({ sub: '2', scope: 'articles:write' }, 3600)}` }

const committedAt = new Map<string, number>()
const latencies: number[] = []
const receivers: Array<{ seen: string[]; url: string; close: () => void }> = []
for (let i = 0; i < ENDPOINTS; i++) {
  const seen: string[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { title: string } }
      seen.push(event.data.title)
      const committed = committedAt.get(event.data.title)
      if (committed !== undefined) latencies.push(performance.now() - committed)
      response.statusCode = 204
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receivers.push({ seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => server.close() })
}

const app = await buildApp({ config })
for (const receiver of receivers) {
  const created = await app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers, payload: { url: receiver.url } })
  if (created.statusCode !== 201) throw new Error(`creating an endpoint: ${created.statusCode} ${created.body}`)
}

const heapStart = process.memoryUsage().heapUsed
const sampler = sampleMemoryPeaks()
const loop = monitorEventLoopDelay({ resolution: 10 })
loop.enable()
const started = performance.now()

let next = 0
await Promise.all(
  Array.from({ length: WRITERS }, async () => {
    while (next < EVENTS) {
      const title = `load ${next++}`
      const response = await app.inject({ method: 'POST', url: '/api/v1/articles', headers, payload: { title, body: '.' } })
      if (response.statusCode !== 201) throw new Error(`write: ${response.statusCode} ${response.body}`)
      committedAt.set(title, performance.now())
    }
  }),
)
const written = performance.now() - started
const expected = EVENTS * ENDPOINTS
const deadline = Date.now() + 600_000
while (receivers.reduce((sum, receiver) => sum + receiver.seen.length, 0) < expected && Date.now() < deadline) await sleep(50)
const delivered = performance.now() - started
const burstLatencies = latencies.splice(0)

// Then the latency of a quiet system: PACED events, one every 100 ms, nothing queued behind them.
const PACED = 50
for (let i = 0; i < PACED; i++) {
  const title = `paced ${i}`
  const response = await app.inject({ method: 'POST', url: '/api/v1/articles', headers, payload: { title, body: '.' } })
  if (response.statusCode !== 201) throw new Error(`write: ${response.statusCode} ${response.body}`)
  committedAt.set(title, performance.now())
  await sleep(100)
}
while (latencies.length < PACED * ENDPOINTS && Date.now() < deadline) await sleep(50)
loop.disable()
const memory = { heapStart, ...sampler.stop() }

const titles = Array.from({ length: EVENTS }, (_, i) => `load ${i}`)
const burstOf = (receiver: { seen: string[] }) => receiver.seen.filter((title) => title.startsWith('load '))
const complete = receivers.filter(
  (receiver) =>
    burstOf(receiver).length === EVENTS &&
    new Set(burstOf(receiver)).size === EVENTS &&
    titles.every((title) => receiver.seen.includes(title)) &&
    receiver.seen.length === EVENTS + PACED,
).length
// Writes run 10 at a time, so the log's order is not the titles' order: every receiver must see the first one's.
const ordered = receivers.filter((receiver) => receiver.seen.every((title, i) => title === receivers[0]!.seen[i])).length
const percentile = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(0)
}
const burst = percentile(burstLatencies)
const paced = percentile(latencies)
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
await app.close()
for (const receiver of receivers) receiver.close()
const heapEnd = process.memoryUsage().heapUsed

console.log(`database: ${config.databaseUrl?.startsWith('postgres') ? 'PostgreSQL' : 'PGlite'}`)
console.log(`${EVENTS} events × ${ENDPOINTS} endpoints = ${expected} deliveries, then ${PACED} paced events`)
console.log(
  `received: ${receivers.reduce((sum, r) => sum + r.seen.length, 0)} (endpoints with every event exactly once: ${complete}/${ENDPOINTS}, same order as the first: ${ordered}/${ENDPOINTS})`,
)
console.log(`writes done after ${(written / 1000).toFixed(1)} s, all delivered after ${(delivered / 1000).toFixed(1)} s`)
console.log(`commit → received, burst (queued behind the backlog): p50 ${burst(0.5)} ms, p99 ${burst(0.99)} ms, max ${burst(1)} ms`)
console.log(`commit → received, paced (${PACED} events 100 ms apart): p50 ${paced(0.5)} ms, p99 ${paced(0.99)} ms, max ${paced(1)} ms`)
console.log(
  `event loop delay: p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`,
)
console.log(`heap: start ${mib(memory.heapStart)}, peak ${mib(memory.heapPeak)}, end ${mib(heapEnd)}; RSS peak ${mib(memory.rssPeak)}`)
process.exit(complete === ENDPOINTS ? 0 : 1)
