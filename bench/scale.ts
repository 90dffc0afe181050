/**
 * `npm run bench -- --scale 20000 --scale 2000000`: what each read costs as the data grows
 * (docs/performance.md, "At the size users reach"). For each size, a database of that many orders
 * and the rest in proportion (bench/scale-data.ts) is built with SQL, migrated by the service's own
 * migrations (timed: on a kept database of an older schema this is the migration users would run),
 * and served by the service as its own process, straight to PostgreSQL. Each read is sent one at a
 * time, warm: 3 discarded, then the median of 15, with the server's and PostgreSQL's CPU per
 * request. Every `page.total` and `totalCount` is compared with a `count(*)` of the same filter.
 * Then the same reads are made once more in-process, their statements captured, and each statement
 * is explained (EXPLAIN ANALYZE, BUFFERS) on the largest size, so that the report shows how
 * PostgreSQL runs every read. Writes <out>/scale.json and scale.md. It is a bench: CI does not run it.
 */
import os from 'node:os'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { LogEvent } from 'kysely'
import pg from 'pg'
import { buildApp } from '../src/app.ts'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { loadConfig } from '../src/config.ts'
import { createDatabase, migrateToLatest } from '../src/db/database.ts'
import { cpuMilliseconds, cpuDelta, cpuOfProcesses } from './cpu.ts'
import { SERVICE_RUN_ENVIRONMENT } from './harness.ts'
import { median } from './ratios.ts'
import {
  adminOf,
  BIG_CUSTOMER,
  BUSY_ARTICLE,
  buildScaleData,
  CUSTOMER,
  SCALE_DATA_VERSION,
  type ScaleDataSize,
  scaleDataSize,
} from './scale-data.ts'
import { startServer } from './servers.ts'

const JWT_SECRET = 'bench-scale-secret-0123456789abcdef0123456789ab'
const WARMUP = 3
/**
 * Rounds of every read sent before any is measured: a fresh server process compiles its code (V8's
 * JIT) and prepares each connection's statements on its first requests, and three warm-up requests
 * of the first read measured left that cost in its numbers (its server CPU per request was twice
 * the same read's later in the run).
 */
const WARM_ROUNDS = 30
const TIMED = 15
const PAGES_DOWN = 200
/** The CPU per request is measured over the timed requests and more, for this long or this many requests. */
const CPU_SECONDS = 2
const CPU_REQUESTS = 500

export interface ScaleOptions {
  url: string
  sizes: number[]
  /** Keep the databases (bench_scale_<N>) for the next run, which then skips building them. */
  keep: boolean
  out: string
  log: (line: string) => void
}

type Caller = 'admin' | 'customer' | 'bigCustomer'

interface Read {
  id: string
  label: string
  caller: Caller
  method?: 'GET' | 'POST'
  path: string
  body?: unknown
  /** A keyed write: each request gets a key of its own. */
  keyed?: boolean
  /** The SQL count the answer's total must equal (envelope A and totalCount). */
  total?: string
  /** Where the total is in the answer. */
  totalOf?: (answer: unknown) => unknown
  /** Mean per page over PAGES_DOWN pages followed by page.next, not a median of one request. */
  pagesDown?: boolean
}

const pageTotal = (answer: unknown) => (answer as { page?: { total?: unknown } }).page?.total
const connectionTotal = (answer: unknown) =>
  (answer as { data?: { ordersConnection?: { totalCount?: unknown } } }).data?.ordersConnection?.totalCount
const graphql = (query: string) => ({ method: 'POST' as const, path: '/graphql', body: { query } })

/** The reads of the table, in its order: the admin's view, a customer's, and those that held before. */
function readsOf(size: ScaleDataSize): Read[] {
  const admin: Caller = 'admin'
  return [
    {
      id: 'orders',
      label: 'admin: `GET /orders?limit=20` (envelope A with `page.total`)',
      caller: admin,
      path: '/api/v1/orders?limit=20',
      total: 'select count(*) from orders',
      totalOf: pageTotal,
    },
    {
      id: 'orders-pending',
      label: 'admin: `?status=pending`',
      caller: admin,
      path: '/api/v1/orders?status=pending',
      total: "select count(*) from orders where status = 'pending'",
      totalOf: pageTotal,
    },
    {
      id: 'orders-total-desc',
      label: 'admin: `?sort=-total`',
      caller: admin,
      path: '/api/v1/orders?sort=-total',
      total: 'select count(*) from orders',
      totalOf: pageTotal,
    },
    {
      id: 'orders-refunded-total',
      label: 'admin: `?status=refunded&sort=total`',
      caller: admin,
      path: '/api/v1/orders?status=refunded&sort=total',
      total: "select count(*) from orders where status = 'refunded'",
      totalOf: pageTotal,
    },
    {
      id: 'orders-paid-id',
      label: 'admin: `?status=paid&sort=-id`',
      caller: admin,
      path: '/api/v1/orders?status=paid&sort=-id',
      total: "select count(*) from orders where status = 'paid'",
      totalOf: pageTotal,
    },
    {
      id: 'orders-pages-down',
      label: `admin: ${PAGES_DOWN} pages down by \`page.next\` (mean per page)`,
      caller: admin,
      path: '/api/v1/orders?limit=20',
      pagesDown: true,
    },
    {
      id: 'orders-of-big-customer',
      label: `admin: \`?user_id=${BIG_CUSTOMER}&sort=-total\` (the customer with 5 % of all orders)`,
      caller: admin,
      path: `/api/v1/orders?user_id=${BIG_CUSTOMER}&sort=-total`,
      total: `select count(*) from orders where user_id = ${BIG_CUSTOMER}`,
      totalOf: pageTotal,
    },
    {
      id: 'big-customer-own',
      label: 'the big customer: own `?status=paid&sort=id`',
      caller: 'bigCustomer',
      path: '/api/v1/orders?status=paid&sort=id',
      total: `select count(*) from orders where user_id = ${BIG_CUSTOMER} and status = 'paid'`,
      totalOf: pageTotal,
    },
    {
      id: 'events',
      label: 'a customer with 10 orders: `GET /events?after=0&limit=100`',
      caller: 'customer',
      path: '/api/v1/events?after=0&limit=100',
    },
    {
      id: 'events-types',
      label: 'the same customer: `?types=order.status_changed` (none exist)',
      caller: 'customer',
      path: '/api/v1/events?after=0&limit=100&types=order.status_changed',
    },
    {
      id: 'events-admin-types',
      label: 'admin: `GET /events?types=article.created`',
      caller: admin,
      path: '/api/v1/events?after=0&limit=100&types=article.created',
    },
    {
      id: 'graphql-total',
      label: 'admin: GraphQL `ordersConnection(first: 20) { totalCount }`',
      caller: admin,
      ...graphql('{ ordersConnection(first: 20) { totalCount edges { node { id total } } } }'),
      total: 'select count(*) from orders',
      totalOf: connectionTotal,
    },
    {
      id: 'own-orders',
      label: "a customer's own orders: `GET /orders`",
      caller: 'customer',
      path: '/api/v1/orders',
      total: `select count(*) from orders where user_id = ${CUSTOMER}`,
      totalOf: pageTotal,
    },
    { id: 'one-order', label: 'one order: `GET /orders/{id}`', caller: 'customer', path: '/api/v1/orders/1' },
    { id: 'user-orders', label: "a user's orders: `GET /users/{id}/orders`", caller: 'customer', path: `/api/v1/users/${CUSTOMER}/orders` },
    {
      id: 'users',
      label: 'admin: `GET /users`',
      caller: admin,
      path: '/api/v1/users',
      total: 'select count(*) from users',
      totalOf: pageTotal,
    },
    {
      id: 'articles',
      label: 'articles: `GET /articles`',
      caller: 'customer',
      path: '/api/v1/articles',
      total: 'select count(*) from articles',
      totalOf: pageTotal,
    },
    {
      id: 'comments',
      label: `the comments of an article with ${size.comments - Math.floor(size.comments / 2)} comments`,
      caller: 'customer',
      path: `/api/v1/articles/${BUSY_ARTICLE}/comments`,
    },
    {
      id: 'graphql-orders',
      label: 'GraphQL `orders(first: 50)` with items',
      caller: admin,
      ...graphql('{ orders(first: 50) { id status total items { sku qty } } }'),
    },
    {
      id: 'create',
      label: 'a customer: keyed `POST /orders` (2 items)',
      caller: 'customer',
      method: 'POST',
      path: '/api/v1/orders',
      body: {
        items: [
          { sku: 'SKU-0001', qty: 2 },
          { sku: 'SKU-0002', qty: 1 },
        ],
      },
      keyed: true,
    },
  ]
}

export interface ScaleReadResult {
  id: string
  label: string
  medianMs: number | null
  serverCpuMsPerRequest: number | null
  postgresCpuMsPerRequest: number | null
  /** Whether the answer's total equalled count(*) of the same filter (undefined: the read has none). */
  totalExact?: boolean
}

export interface ScaleSizeResult {
  size: ScaleDataSize
  buildSeconds: number | null
  migrationSeconds: number
  reads: ScaleReadResult[]
  /** The EXPLAIN ANALYZE of each statement of each read, by read id. */
  plans?: Record<string, string[]>
}

export interface ScaleResults {
  measuredAt: string
  machine: { cpus: number; loadAverageAtStart: number[]; node: string; postgres: string }
  method: string[]
  sizes: ScaleSizeResult[]
}

export async function runScaleBench(options: ScaleOptions): Promise<ScaleResults> {
  const { log } = options
  const admin = new pg.Client({ connectionString: options.url })
  await admin.connect()
  const version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]?.server_version ?? 'unknown'
  const results: ScaleResults = {
    measuredAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      loadAverageAtStart: os.loadavg().map((v) => Math.round(v * 100) / 100),
      node: process.version,
      postgres: version,
    },
    method: [
      `Every read is first sent ${WARM_ROUNDS} times over (warming the server's code and its prepared statements); then each is sent ${WARMUP} times (discarded), then ${TIMED} times one after another over one keep-alive connection; the median of the ${TIMED} is reported, from the client (fetch). The CPU the server process and its PostgreSQL backends used (clock ticks of /proc) is divided by the requests sent: the timed ones and as many more as ${CPU_SECONDS} s allows (at most ${CPU_REQUESTS}).`,
      `"${PAGES_DOWN} pages down" follows page.next from the first page ${PAGES_DOWN} times and reports the mean per page.`,
      'The keyed create sends a new Idempotency-Key each time.',
      'Every total (page.total, totalCount) is compared with count(*) of the same filter after the timed requests.',
      'The service runs as its own process (src/server.ts, NODE_ENV=production, limits raised past the load, as in npm run bench), straight to PostgreSQL. The plans come from a second, in-process app on the same database, whose statements are captured and run again under EXPLAIN (ANALYZE, BUFFERS).',
    ],
    sizes: [],
  }
  try {
    const largest = Math.max(...options.sizes)
    for (const orders of options.sizes) {
      const size = scaleDataSize(orders)
      const database = `bench_scale_${orders}`
      const url = new URL(options.url)
      url.pathname = `/${database}`
      const buildSeconds = await ensureData(admin, url.toString(), database, size, log)
      const migrationStarted = performance.now()
      const handle = await createDatabase({ url: url.toString(), statementTimeoutMs: 0 })
      try {
        await migrateToLatest(handle.db)
      } finally {
        await handle.close()
      }
      const migrationSeconds = (performance.now() - migrationStarted) / 1000
      log(`${database}: migrated in ${migrationSeconds.toFixed(1)} s`)
      const reads = await measureReads(url.toString(), size, log)
      const plans = orders === largest ? await explainReads(url.toString(), size, log) : undefined
      results.sizes.push({
        size,
        buildSeconds,
        migrationSeconds: Math.round(migrationSeconds * 10) / 10,
        reads,
        ...(plans ? { plans } : {}),
      })
      if (!options.keep) {
        await admin.query(`drop database if exists ${database} with (force)`)
        log(`dropped ${database}`)
      }
    }
  } finally {
    await admin.end()
  }
  return results
}

/** Builds the size's database unless a kept one of this data version is there; the seconds it took, or null when kept. */
async function ensureData(
  admin: pg.Client,
  url: string,
  database: string,
  size: ScaleDataSize,
  log: (line: string) => void,
): Promise<number | null> {
  const exists = (await admin.query('select 1 from pg_database where datname = $1', [database])).rowCount === 1
  if (exists) {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const marker = await client
        .query<{ version: number; orders: number }>(
          `select version, orders from bench_scale_data where exists (select from pg_tables where tablename = 'bench_scale_data')`,
        )
        .catch(() => undefined)
      const row = marker?.rows[0]
      if (row && row.version === SCALE_DATA_VERSION && row.orders === size.orders) {
        log(`${database}: kept from an earlier run (data version ${SCALE_DATA_VERSION})`)
        return null
      }
    } finally {
      await client.end()
    }
    await admin.query(`drop database ${database} with (force)`)
  }
  log(
    `${database}: building ${size.orders.toLocaleString('en')} orders, ${size.users.toLocaleString('en')} users, ${size.comments.toLocaleString('en')} comments and their events`,
  )
  const started = performance.now()
  await admin.query(`create database ${database}`)
  const handle = await createDatabase({ url, statementTimeoutMs: 0 })
  try {
    await migrateToLatest(handle.db)
    await buildScaleData(handle.db, size, log)
  } finally {
    await handle.close()
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('vacuum (analyze)')
    await client.query('create table bench_scale_data (version integer not null, orders integer not null)')
    await client.query('insert into bench_scale_data values ($1, $2)', [SCALE_DATA_VERSION, size.orders])
  } finally {
    await client.end()
  }
  const seconds = (performance.now() - started) / 1000
  log(`${database}: built and vacuumed in ${seconds.toFixed(0)} s`)
  return Math.round(seconds)
}

function tokensOf(size: ScaleDataSize): Record<Caller, string> {
  const sign = createTokenSigner(JWT_SECRET)
  return {
    admin: sign({ sub: String(adminOf(size)), scope: 'admin' }, 24 * 3600),
    customer: sign({ sub: String(CUSTOMER), scope: 'orders:read orders:write' }, 24 * 3600),
    bigCustomer: sign({ sub: String(BIG_CUSTOMER), scope: 'orders:read orders:write' }, 24 * 3600),
  }
}

interface Sent {
  status: number
  body: unknown
}

function requestOf(read: Read, token: string, base: string, n: number, path = read.path): { url: string; init: RequestInit } {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
  if (read.body !== undefined) headers['content-type'] = 'application/json'
  if (read.keyed) headers['idempotency-key'] = `scale-${process.pid}-${Date.now()}-${n}`
  return {
    url: path.startsWith('http') ? path : `${base}${path}`,
    init: { method: read.method ?? 'GET', headers, ...(read.body !== undefined ? { body: JSON.stringify(read.body) } : {}) },
  }
}

async function send(read: Read, token: string, base: string, n: number, path?: string): Promise<Sent & { ms: number }> {
  const { url, init } = requestOf(read, token, base, n, path)
  const started = performance.now()
  const response = await fetch(url, init)
  const text = await response.text()
  const ms = performance.now() - started
  const body = text ? JSON.parse(text) : undefined
  if (response.status >= 300) throw new Error(`${read.id}: ${init.method} ${url} answered ${response.status}: ${text.slice(0, 300)}`)
  const errors = (body as { errors?: unknown[] } | undefined)?.errors
  if (errors?.length) throw new Error(`${read.id}: GraphQL errors ${JSON.stringify(errors).slice(0, 300)}`)
  return { status: response.status, body, ms }
}

async function measureReads(url: string, size: ScaleDataSize, log: (line: string) => void): Promise<ScaleReadResult[]> {
  const serviceUrl = new URL(url)
  serviceUrl.searchParams.set('application_name', 'bench-scale-service')
  const server = await startServer(
    'service',
    { ...SERVICE_RUN_ENVIRONMENT, JWT_SECRET, DATABASE_URL: serviceUrl.toString() },
    { startTimeoutMs: 600_000 },
  )
  const monitor = new pg.Client({ connectionString: url })
  await monitor.connect()
  const backends = async () => {
    const { rows } = await monitor.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [
      'bench-scale-service',
    ])
    return cpuOfProcesses(rows.map((row) => row.pid))
  }
  const tokens = tokensOf(size)
  const results: ScaleReadResult[] = []
  try {
    for (let round = 0; round < WARM_ROUNDS; round++) {
      for (const read of readsOf(size)) await send(read, tokens[read.caller], server.baseUrl, -1 - round)
    }
    for (const read of readsOf(size)) {
      const token = tokens[read.caller]
      for (let i = 0; i < WARMUP; i++) await send(read, token, server.baseUrl, i)
      const serverBefore = cpuMilliseconds(server.pid)
      const postgresBefore = await backends()
      const times: number[] = []
      let requests = 0
      let last: (Sent & { ms: number }) | undefined
      if (read.pagesDown) {
        let next: string | undefined = read.path
        for (let page = 0; page < PAGES_DOWN && next; page++) {
          const sent = await send(read, token, server.baseUrl, page, next)
          times.push(sent.ms)
          requests++
          next = (sent.body as { page?: { next?: string | null } }).page?.next ?? undefined
        }
      } else {
        for (let i = 0; i < TIMED; i++) {
          last = await send(read, token, server.baseUrl, WARMUP + i)
          times.push(last.ms)
          requests++
        }
        // CPU is read in clock ticks (10 ms): more of the same requests, untimed, until the
        // deltas are large enough to mean something.
        const cpuStarted = performance.now()
        while (performance.now() - cpuStarted < CPU_SECONDS * 1000 && requests < CPU_REQUESTS) {
          await send(read, token, server.baseUrl, WARMUP + requests)
          requests++
        }
      }
      const serverAfter = cpuMilliseconds(server.pid)
      const postgresAfter = await backends()
      const result: ScaleReadResult = {
        id: read.id,
        label: read.label,
        medianMs: round2(read.pagesDown ? times.reduce((a, b) => a + b, 0) / times.length : median(times)),
        serverCpuMsPerRequest:
          serverBefore !== undefined && serverAfter !== undefined ? round3((serverAfter - serverBefore) / requests) : null,
        postgresCpuMsPerRequest: round3(cpuDelta(postgresBefore, postgresAfter) / requests),
      }
      if (read.total && read.totalOf && last) {
        const counted = Number((await monitor.query<{ count: string }>(read.total)).rows[0]?.count)
        result.totalExact = Number(read.totalOf(last.body)) === counted
        if (!result.totalExact) log(`  ${read.id}: total ${String(read.totalOf(last.body))}, count(*) ${counted}`)
      }
      log(
        `  ${read.id}: ${result.medianMs} ms (server ${result.serverCpuMsPerRequest} ms, PostgreSQL ${result.postgresCpuMsPerRequest} ms of CPU per request)${result.totalExact === undefined ? '' : result.totalExact ? ', total exact' : ', TOTAL WRONG'}`,
      )
      results.push(result)
    }
  } finally {
    await monitor.end()
    await server.stop()
  }
  return results
}

/** Every statement each read sends, run again under EXPLAIN (ANALYZE, BUFFERS), by read id. */
async function explainReads(url: string, size: ScaleDataSize, log: (line: string) => void): Promise<Record<string, string[]>> {
  let captured: Array<{ sql: string; parameters: readonly unknown[] }> = []
  const onQuery = (event: LogEvent) => {
    captured.push({ sql: event.query.sql, parameters: event.query.parameters })
  }
  const handle = await createDatabase({ url, statementTimeoutMs: 0, onQuery })
  const app = await buildApp({
    config: loadConfig({ ...SERVICE_RUN_ENVIRONMENT, LOG_LEVEL: 'error', JWT_SECRET, DATABASE_URL: url }),
    database: handle,
  })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const tokens = tokensOf(size)
  const plans: Record<string, string[]> = {}
  try {
    for (const read of readsOf(size)) {
      if (read.method === 'POST' && read.path !== '/graphql') continue
      // Twice: the first warms the app's statements and caches, the second is what is explained.
      for (const round of [0, 1]) {
        captured = []
        const { init } = requestOf(read, tokens[read.caller], '', round)
        const response = await app.inject({
          method: read.method ?? 'GET',
          url: read.path,
          headers: init.headers as Record<string, string>,
          ...(read.body !== undefined ? { payload: JSON.stringify(read.body) } : {}),
        })
        if (response.statusCode >= 300)
          throw new Error(`${read.id}: answered ${response.statusCode} in-process: ${response.body.slice(0, 300)}`)
      }
      const statements = captured.filter((statement) => /^\s*(select|with)\b/i.test(statement.sql))
      plans[read.id] = []
      for (const statement of statements) {
        const explained = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.sql}`, [
          ...statement.parameters,
        ])
        plans[read.id]!.push(explained.rows.map((row) => row['QUERY PLAN']).join('\n'))
      }
      log(`  plan of ${read.id}: ${statements.length} statement(s)`)
    }
  } finally {
    await client.end()
    await app.close()
    await handle.close()
  }
  return plans
}

const round2 = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100)
const round3 = (value: number | null) => (value === null ? null : Math.round(value * 1000) / 1000)

/** The targets: at most 20 ms on the largest size, and at most twice the smallest size's time plus 3 ms. */
export function renderScaleMarkdown(results: ScaleResults, note?: string): string {
  const sizes = [...results.sizes].sort((a, b) => a.size.orders - b.size.orders)
  const smallest = sizes[0]
  const largest = sizes[sizes.length - 1]
  const lines: string[] = [
    '# Scale bench: what each read costs as the data grows',
    '',
    `Measured ${results.measuredAt} on ${results.machine.cpus} cores (load average at start ${results.machine.loadAverageAtStart.join(', ')}), Node ${results.machine.node}, PostgreSQL ${results.machine.postgres}. \`npm run bench -- ${sizes.map((s) => `--scale ${s.size.orders}`).join(' ')}\`; bench/scale.ts, bench/scale-data.ts.`,
    ...(note ? ['', note] : []),
    '',
    '## Data',
    '',
    '| Orders | Users | Articles | Comments | Built in | Migrated in |',
    '|---|---|---|---|---|---|',
    ...sizes.map(
      (s) =>
        `| ${s.size.orders.toLocaleString('en')} | ${s.size.users.toLocaleString('en')} | ${s.size.articles.toLocaleString('en')} | ${s.size.comments.toLocaleString('en')} | ${s.buildSeconds === null ? 'kept' : `${s.buildSeconds} s`} | ${s.migrationSeconds} s |`,
    ),
    '',
    '## Reads, one at a time (median of 15, ms), with CPU per request (server / PostgreSQL, ms)',
    '',
    `| Read | ${sizes.map((s) => `${s.size.orders.toLocaleString('en')} orders`).join(' | ')} | CPU at ${largest?.size.orders.toLocaleString('en')} | Total exact | Target (≤ 20 ms, ≤ 2× + 3 ms) |`,
    `|---|${sizes.map(() => '---|').join('')}---|---|---|`,
  ]
  for (const read of largest?.reads ?? []) {
    const at = (s: ScaleSizeResult) => s.reads.find((r) => r.id === read.id)
    const small = smallest ? at(smallest)?.medianMs : null
    const big = read.medianMs
    const bound = small === null || small === undefined ? null : Math.min(20, 2 * small + 3)
    const target =
      read.id === 'create'
        ? small && big !== null
          ? big <= 1.5 * small
            ? `met (≤ 1.5× ${small})`
            : `**missed** (> 1.5× ${small})`
          : ''
        : bound === null || big === null
          ? ''
          : big <= bound
            ? `met (≤ ${round2(bound)})`
            : `**missed** (> ${round2(bound)})`
    const exact = sizes.map((s) => at(s)?.totalExact).filter((v) => v !== undefined)
    lines.push(
      `| ${read.label} | ${sizes.map((s) => `${at(s)?.medianMs ?? '–'}`).join(' | ')} | ${read.serverCpuMsPerRequest ?? '–'} / ${read.postgresCpuMsPerRequest ?? '–'} | ${exact.length === 0 ? '' : exact.every(Boolean) ? 'yes' : '**no**'} | ${target} |`,
    )
  }
  lines.push('', '## Method', '', ...results.method.map((line) => `- ${line}`))
  if (largest?.plans) {
    lines.push(
      '',
      `## Plans at ${largest.size.orders.toLocaleString('en')} orders`,
      '',
      'Each statement a read sends, under EXPLAIN (ANALYZE, BUFFERS).',
    )
    for (const read of largest.reads) {
      const plans = largest.plans[read.id]
      if (!plans?.length) continue
      lines.push('', `### ${read.label}`, '')
      for (const plan of plans) lines.push('```text', plan, '```')
    }
  }
  return `${lines.join('\n')}\n`
}

export async function writeScaleResults(results: ScaleResults, out: string, note?: string): Promise<void> {
  await mkdir(out, { recursive: true })
  await writeFile(path.join(out, 'scale.json'), `${JSON.stringify(results, null, 2)}\n`)
  await writeFile(path.join(out, 'scale.md'), renderScaleMarkdown(results, note))
}
