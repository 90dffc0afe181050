/**
 * Load on the event log: 1,000 events to 5 webhook endpoints
 * (real node:http receivers) and 50 Server-Sent Event streams at once, 5 of the streams not reading
 * while the events are written. Nothing is lost or duplicated: every endpoint and every stream gets
 * every event once, in the log's order; memory is bounded: once the streams are closed and the
 * deliveries done, a full garbage collection brings the heap back to within RETAINED_LIMIT of where
 * it was before the load (nothing per event or per delivery is kept). The peak heap, peak RSS and
 * the event loop's longest block are printed as comments for the notes (`npm run events:load` and
 * scripts/webhook-load.ts measure latency, the latter with 20 endpoints); nothing here asserts a time.
 * Five endpoints, delivered side by side, prove what twenty would (every endpoint gets every event
 * once, in order, nothing kept per delivery) at a quarter of the CPU: on the embedded database each
 * delivery costs about 5 ms of CPU, and this file runs in every CI run (decisions §14).
 */
import t, { type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { sampleMemoryPeaks } from '../../../scripts/memory-peaks.ts'
import { bearer, build } from '../../helper.ts'
import { ADA, listIds, logEnd, relayed, serve } from './event-helpers.ts'

const EVENTS = 1000
const ENDPOINTS = 5
const STREAMS = 50
const SLOW = 5
const WRITERS = 10
/** What the heap may keep after the load: the readers' 70,000 ids and the app's caches, a few MiB. */
const RETAINED_LIMIT = 64 * 1024 * 1024

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
/** heapUsed after a full collection. */
function collectedHeap(): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

// Writing and delivering 5,000 webhooks and 50,000 stream messages takes minutes on a busy 2-core machine.
t.setTimeout(600_000)

interface Reader {
  ids: string[]
}

/** A receiver keeping only the event ids it was posted, answering 204. */
async function receiver(t: Test): Promise<Reader & { url: string }> {
  const ids: string[] = []
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      ids.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id)
      response.statusCode = 204
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { ids, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }
}

/** A stream keeping only the `id:` of each event. */
function stream(t: Test, base: string, after: string, sub: number): Promise<Reader & { response: http.IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${base}/api/v1/events/stream?after=${after}`,
      { headers: { ...bearer(sub, 'admin'), accept: 'text/event-stream' } },
      (response) => {
        if (response.statusCode !== 200) return reject(new Error(`stream: ${response.statusCode}`))
        const ids: string[] = []
        // Every event has one `id:` line; a chunk may end inside a line.
        let partial = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          const lines = (partial + chunk).split('\n')
          partial = lines.pop() ?? ''
          for (const line of lines) if (line.startsWith('id: ')) ids.push(line.slice(4))
        })
        response.on('error', () => {})
        t.teardown(() => request.destroy())
        resolve({ ids, response })
      },
    )
    request.on('error', reject)
  })
}

t.test(`${EVENTS} events to ${ENDPOINTS} webhook endpoints and ${STREAMS} streams: nothing lost, memory bounded`, async (t) => {
  const app = await build(t, {
    env: {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_CONCURRENCY: String(ENDPOINTS),
      WEBHOOK_POLL: '50ms',
      RATE_LIMIT_MAX: '1000000',
    },
  })
  const { http: base } = await serve(app)
  const writer = bearer(3, 'articles:write')
  // The log's end before the load, once relayed: the readers start after it.
  const before = await logEnd(app)
  const article = await app.inject({ method: 'POST', url: '/api/v1/articles', headers: writer, payload: { title: 'Before', body: '.' } })
  t.equal(article.statusCode, 201)
  const start = (await relayed(app, before, 1)).at(-1)!.id

  const hooks: Reader[] = []
  for (let i = 0; i < ENDPOINTS; i++) {
    const hook = await receiver(t)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: bearer(ADA, 'admin'),
      payload: { url: hook.url },
    })
    t.equal(created.statusCode, 201)
    hooks.push(hook)
  }
  // One admin per stream: the per-caller stream limit stays as configured.
  const streams = await Promise.all(Array.from({ length: STREAMS }, (_, n) => stream(t, base, start, 1000 + n)))
  const slow = streams.slice(0, SLOW)
  for (const reader of slow) reader.response.pause()

  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  const heapStart = collectedHeap()
  const sampler = sampleMemoryPeaks()
  t.teardown(() => void sampler.stop())

  let next = 0
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < EVENTS) {
        const n = next++
        // Articles, not comments on one article: the writers do not queue behind one another's lock.
        const response = await app.inject({
          method: 'POST',
          url: '/api/v1/articles',
          headers: writer,
          payload: { title: `Load ${n}`, body: '.' },
        })
        if (response.statusCode !== 201) throw new Error(`write ${n}: ${response.statusCode} ${response.body}`)
      }
    }),
  )
  for (const reader of slow) reader.response.resume()

  // The log's order, as the list gives it (writers ran WRITERS at a time, so not the order written).
  const expected: string[] = []
  for (let after = start, empty = 0; expected.length < EVENTS && empty < 1200; ) {
    const page = await listIds(app, ADA, after)
    if (page.length === 0) {
      empty++
      await sleep(50)
      continue
    }
    expected.push(...page.map((event) => event.id))
    after = page.at(-1)!.id
  }
  const readers = [...hooks, ...streams]
  // Until every reader has them all, or nothing more arrives for a minute (then the checks below fail).
  for (let received = -1, still = 0; readers.some((reader) => reader.ids.length < EVENTS) && still < 600; ) {
    await sleep(100)
    const now = readers.reduce((sum, reader) => sum + reader.ids.length, 0)
    still = now === received ? still + 1 : 0
    received = now
  }
  await sleep(500)
  const { heapPeak, rssPeak } = sampler.stop()
  loop.disable()

  t.equal(expected.length, EVENTS, 'the log holds every event written')
  t.equal(hooks.filter((hook) => hook.ids.join() === expected.join()).length, ENDPOINTS, 'every endpoint: every event once, in order')
  t.equal(streams.filter((s) => s.ids.join() === expected.join()).length, STREAMS, 'every stream: every event once, in order')
  for (const reader of streams) reader.response.destroy()
  await sleep(500)
  const retained = collectedHeap() - heapStart
  t.ok(retained < RETAINED_LIMIT, `the heap keeps ${mib(retained)} after the load, less than ${mib(RETAINED_LIMIT)}`)
  t.comment(
    `heap: start ${mib(heapStart)}, peak ${mib(heapPeak)} (uncollected garbage included), kept ${mib(retained)}; RSS peak ${mib(rssPeak)}; event loop: p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, longest block ${(loop.max / 1e6).toFixed(1)} ms`,
  )
})

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}
