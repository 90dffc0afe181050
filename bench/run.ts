/**
 * npm run bench: throughput and latency of representative requests against a listening server on
 * loopback, with a fixed concurrency for a fixed time per scenario. Runs on an in-memory PGlite
 * (or DATABASE_URL), compares GraphQL with and without graphql-jit, and writes the results to
 * bench/results.json. Numbers are for comparison on one machine, not absolute truths.
 *   BENCH_SECONDS (default 5), BENCH_CONCURRENCY (default 16)
 */
import { writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.ts'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { loadConfig } from '../src/config.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16)
const secret = 'bench-secret-0123456789abcdef0123456789abcdef'
const token = createTokenSigner(secret)({ sub: '1', scope: 'admin' }, 3600)

interface Scenario {
  name: string
  method: 'GET' | 'POST'
  path: string
  body?: unknown
}

const scenarios: Scenario[] = [
  { name: 'REST GET one order', method: 'GET', path: '/api/v1/orders/3' },
  { name: 'REST GET order list (20)', method: 'GET', path: '/api/v1/orders?limit=20' },
  { name: 'REST GET articles list', method: 'GET', path: '/api/v1/articles' },
  {
    name: 'GraphQL user { orders(last: 10) { items } }',
    method: 'POST',
    path: '/graphql',
    body: { query: '{ user(id: 2) { name orders(last: 10) { id total items { sku qty } } } }' },
  },
  {
    name: 'GraphQL orders(first: 20) { user { company } items }',
    method: 'POST',
    path: '/graphql',
    body: { query: '{ orders(first: 20) { id user { name company { name } } items { sku qty } } }' },
  },
]

async function load(base: string, scenario: Scenario) {
  const latencies: number[] = []
  let errors = 0
  const deadline = performance.now() + seconds * 1000
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const body = scenario.body ? JSON.stringify(scenario.body) : undefined
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now()
        const response = await fetch(base + scenario.path, { method: scenario.method, headers, ...(body ? { body } : {}) })
        await response.arrayBuffer()
        if (response.status !== 200) errors++
        latencies.push(performance.now() - started)
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  const at = (q: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(2))
  return { requests: latencies.length, rps: Math.round(latencies.length / seconds), p50ms: at(0.5), p99ms: at(0.99), errors }
}

async function run(jit: number) {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    JWT_SECRET: secret,
    DATABASE_URL: process.env.DATABASE_URL ?? 'memory://',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000',
    GRAPHQL_COST_BUCKET: '100000000',
    GRAPHQL_COST_RESTORE_RATE: '100000000',
    GRAPHQL_JIT: String(jit),
  })
  const app = await buildApp({ config })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const results: Record<string, unknown> = {}
  for (const scenario of scenarios) {
    if (jit === 0 && scenario.method !== 'POST') continue
    await load(base, { ...scenario }).catch(() => undefined) // warm-up pass, discarded
    results[scenario.name] = await load(base, scenario)
    console.log(`${jit ? 'jit' : 'no-jit'}  ${scenario.name.padEnd(52)} ${JSON.stringify(results[scenario.name])}`)
  }
  await app.close()
  return results
}

const withJit = await run(1)
const withoutJit = await run(0)
const report = {
  measuredAt: new Date().toISOString(),
  node: process.version,
  database: process.env.DATABASE_URL ? 'postgres' : 'pglite (memory)',
  seconds,
  concurrency,
  withJit,
  withoutJit,
}
await writeFile(new URL('./results.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
console.log('wrote bench/results.json')
