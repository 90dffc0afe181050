/**
 * npm run chaos: two real server processes on a private PostgreSQL database, a mixed REST +
 * GraphQL + subscription load, and PostgreSQL faults injected while it runs. It prints what was
 * lost or duplicated (orders and events; both must be 0), how long the service took to answer
 * again after each fault, and each process's RSS over time. Exit code 1 when anything was lost,
 * duplicated, answered 5xx other than 503, or a server process died.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run chaos
 *
 * CHAOS_SECONDS (30), CHAOS_CONCURRENCY (8), CHAOS_FAULT_EVERY (3s). With REDIS_URL, instance A
 * uses Redis and B does not (the mixed deployment of decisions §12). Faults alternate between
 * terminating every backend of the database (pool clients and listeners, mid-transaction) and
 * terminating only the event listeners. It never restarts the PostgreSQL server itself.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { createClient, type Client } from 'graphql-ws'
import pg from 'pg'
import WebSocket from 'ws'
import { createTokenSigner } from '../src/auth/tokens.ts'

const baseUrl = process.env.DATABASE_URL
if (!baseUrl || !/^postgres(ql)?:/.test(baseUrl)) {
  console.error('chaos: DATABASE_URL must point at a PostgreSQL server (the faults need a real one)')
  process.exit(2)
}
const seconds = Number(process.env.CHAOS_SECONDS ?? 30)
const concurrency = Number(process.env.CHAOS_CONCURRENCY ?? 8)
const faultEveryMs = Number(process.env.CHAOS_FAULT_EVERY ?? 3) * 1000
const redisUrl = process.env.REDIS_URL || ''

const database = `chaos_${Date.now()}_${randomBytes(3).toString('hex')}`
const databaseUrl = (() => {
  const url = new URL(baseUrl)
  url.pathname = `/${database}`
  return url.toString()
})()
const jwtSecret = randomBytes(32).toString('hex')
const sign = createTokenSigner(jwtSecret)
const writer = `Bearer ${sign({ sub: '2', scope: 'orders:read orders:write' }, 3600)}`
const admin = `Bearer ${sign({ sub: '1', scope: 'admin' }, 3600)}`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Instance {
  name: string
  child: ChildProcess
  http: string
  exited: boolean
  rss: number[]
}

async function startInstance(name: string, redis: string): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis,
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: jwtSecret,
      SEED: 'true',
      LOG_LEVEL: 'info',
      // The load is one caller at a high rate: the per-caller budgets would refuse it.
      RATE_LIMIT_MAX: '1000000',
      GRAPHQL_COST_BUCKET: '100000000',
      GRAPHQL_COST_RESTORE_RATE: '100000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const instance: Instance = { name, child, http: '', exited: false, rss: [] }
  child.on('exit', (code, signal) => {
    instance.exited = true
    if (!stopping) console.error(`chaos: instance ${name} exited (code ${code}, signal ${signal})`)
  })
  child.stderr!.on('data', (chunk) => process.stderr.write(`[${name}] ${chunk}`))
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
    if (match) {
      instance.http = match[1]!
      break
    }
  }
  if (!instance.http) throw new Error(`instance ${name} did not start`)
  // Keep draining its log so the pipe never fills.
  child.stdout!.resume()
  return instance
}

function rssOf(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

const statuses = new Map<number, number>()
const unexpected: string[] = []
function count(status: number, what: string) {
  statuses.set(status, (statuses.get(status) ?? 0) + 1)
  if (status >= 500 && status !== 503) unexpected.push(`${what}: ${status}`)
}

/** Sends one keyed create until it is answered with its order; returns the order id. */
async function keyedCreate(instance: Instance, style: 'rest' | 'graphql', key: string): Promise<number | undefined> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    try {
      if (style === 'rest') {
        const response = await fetch(`${instance.http}/api/v1/orders`, {
          method: 'POST',
          headers: { authorization: writer, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({
            items: [
              { sku: 'KB-101', qty: 1 },
              { sku: 'MS-202', qty: 2 },
            ],
          }),
        })
        count(response.status, 'POST /orders')
        const body = (await response.json()) as { id?: number }
        if (response.status === 201) return body.id
      } else {
        const response = await fetch(`${instance.http}/graphql`, {
          method: 'POST',
          headers: { authorization: writer, 'content-type': 'application/json' },
          body: JSON.stringify({
            query: 'mutation($key: String!) { createOrder(input: { items: [{ sku: "CB-404", qty: 1 }] }, idempotencyKey: $key) { id } }',
            variables: { key },
          }),
        })
        count(response.status, 'createOrder')
        const body = (await response.json()) as {
          data?: { createOrder?: { id: string } | null }
          errors?: Array<{ extensions?: { code?: string } }>
        }
        const code = body.errors?.[0]?.extensions?.code
        if (code === 'INTERNAL_SERVER_ERROR') unexpected.push(`createOrder: ${JSON.stringify(body.errors)}`)
        if (body.data?.createOrder) return Number(body.data.createOrder.id)
      }
    } catch {
      // The connection itself failed: retry like any client would.
    }
    await sleep(50)
  }
  return undefined
}

async function read(instance: Instance, n: number): Promise<void> {
  try {
    if (n % 2 === 0) {
      const response = await fetch(`${instance.http}/api/v1/orders?limit=20`, { headers: { authorization: admin } })
      count(response.status, 'GET /orders')
      await response.arrayBuffer()
    } else {
      const response = await fetch(`${instance.http}/graphql`, {
        method: 'POST',
        headers: { authorization: admin, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ orders(first: 10) { id total user { name } items { sku qty } } }' }),
      })
      count(response.status, 'query orders')
      const body = (await response.json()) as { errors?: Array<{ extensions?: { code?: string } }> }
      if (body.errors?.some((e) => e.extensions?.code === 'INTERNAL_SERVER_ERROR'))
        unexpected.push(`query orders: ${JSON.stringify(body.errors)}`)
    }
  } catch {
    // A refused connection during a fault is the client's to retry; reads are not verified.
  }
}

function subscribe(instance: Instance): { client: Client; received: number[]; ready: Promise<void> } {
  const received: number[] = []
  const client = createClient({
    url: `${instance.http.replace('http:', 'ws:')}/graphql`,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: { Authorization: admin },
  })
  const ready = new Promise<void>((resolve) => {
    client.on('connected', () => setTimeout(resolve, 200))
  })
  client.subscribe<{ orderCreated: { id: string } }>(
    { query: 'subscription { orderCreated { id } }' },
    {
      next: (message) => {
        if (message.data) received.push(Number(message.data.orderCreated.id))
      },
      error: (error) => {
        if (!stopping) console.error(`chaos: subscription on ${instance.name} ended: ${(error as { code?: number }).code ?? String(error)}`)
      },
      complete: () => {},
    },
  )
  return { client, received, ready }
}

let stopping = false
const control = new pg.Client({ connectionString: baseUrl })
await control.connect()
await control.query(`CREATE DATABASE "${database}"`)
const instances: Instance[] = []
const clients: Client[] = []
let exitCode = 0
try {
  console.log(`chaos: database ${database}; ${seconds} s of load at concurrency ${concurrency}; a fault every ${faultEveryMs / 1000} s`)
  console.log('chaos: rate limit and GraphQL points budgets raised for the run (one caller at a high rate)')
  const a = await startInstance('A', redisUrl)
  const b = await startInstance('B', '')
  instances.push(a, b)
  console.log(`chaos: A ${a.http}${redisUrl ? ' (Redis)' : ''}, B ${b.http}`)
  const baseline = Number((await queryTarget<{ max: string | null }>('select max(id) as max from orders')).rows[0]?.max ?? 0)

  const subscribers = [subscribe(a), subscribe(b)]
  clients.push(...subscribers.map((s) => s.client))
  await Promise.all(subscribers.map((s) => s.ready))

  const started = Date.now()
  const deadline = started + seconds * 1000
  const rssTimer = setInterval(() => {
    for (const instance of instances) if (!instance.exited) instance.rss.push(rssOf(instance.child.pid))
  }, 1000)

  // Faults, and how long until the next successful create after each.
  const recoveries: number[] = []
  let lastFault = 0
  let faults = 0
  const faulting = (async () => {
    while (Date.now() < deadline - faultEveryMs) {
      await sleep(faultEveryMs)
      const everything = faults % 2 === 0
      const result = await control.query(
        `select count(pg_terminate_backend(pid)) as n from pg_stat_activity
          where datname = $1 and pid <> pg_backend_pid() ${everything ? '' : `and application_name like 'api-events%'`}`,
        [database],
      )
      faults++
      lastFault = Date.now()
      console.log(
        `chaos: t=${((lastFault - started) / 1000).toFixed(1)} s terminated ${result.rows[0].n} ${everything ? 'backends' : 'listener backends'}`,
      )
    }
  })()

  const created = new Map<string, number | undefined>()
  let sequence = 0
  let recoveredSince = 0
  const workers = Array.from({ length: concurrency }, async (_, worker) => {
    let n = 0
    while (Date.now() < deadline) {
      const instance = instances[(worker + n) % 2]!
      n++
      if (n % 3 === 0) {
        await read(instance, n)
        continue
      }
      const style = n % 3 === 1 ? 'rest' : 'graphql'
      const key = `chaos-${style}-${++sequence}`
      const id = await keyedCreate(instance, style, key)
      created.set(key, id)
      if (id !== undefined && lastFault > recoveredSince) {
        recoveries.push(Date.now() - lastFault)
        recoveredSince = lastFault
      }
    }
  })
  await Promise.all(workers)
  await faulting

  // Every committed order must reach both subscribers; give delivery time to catch up.
  const orders = (await queryTarget<{ id: string }>('select id from orders where id > $1 order by id', [baseline])).rows.map((r) =>
    Number(r.id),
  )
  const settleUntil = Date.now() + 20_000
  while (Date.now() < settleUntil && subscribers.some((s) => new Set(s.received.filter((id) => id > baseline)).size < orders.length))
    await sleep(200)
  clearInterval(rssTimer)

  const keys = [...created.keys()]
  const unresolved = keys.filter((key) => created.get(key) === undefined)
  const distinctIds = new Set([...created.values()].filter((id): id is number => id !== undefined))
  const duplicatedOrders = orders.length - distinctIds.size
  console.log('\nchaos: results')
  console.log(
    `  keyed creates         ${keys.length} (${keys.filter((k) => k.includes('rest')).length} REST, ${keys.filter((k) => k.includes('graphql')).length} GraphQL)`,
  )
  console.log(`  orders in database    ${orders.length}`)
  console.log(`  lost orders           ${unresolved.length} (keys never answered with an order within 60 s)`)
  console.log(`  duplicated orders     ${duplicatedOrders} (orders in the database beyond one per key)`)
  for (const [index, subscriber] of subscribers.entries()) {
    const ids = subscriber.received.filter((id) => id > baseline)
    const seen = new Set(ids)
    const lost = orders.filter((id) => !seen.has(id)).length
    const duplicated = ids.length - seen.size
    console.log(
      `  events on ${instances[index]!.name}           ${seen.size}/${orders.length} delivered, ${lost} lost, ${duplicated} duplicated`,
    )
    if (lost > 0 || duplicated > 0) exitCode = 1
  }
  console.log(`  faults injected       ${faults}`)
  console.log(
    `  recovery after fault  ${recoveries.length ? `median ${median(recoveries)} ms, max ${Math.max(...recoveries)} ms (fault → next successful create)` : 'n/a'}`,
  )
  console.log(
    `  statuses              ${[...statuses.entries()]
      .sort()
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')}`,
  )
  console.log(`  unexpected 5xx        ${unexpected.length}${unexpected.length ? `: ${unexpected.slice(0, 5).join(' | ')}` : ''}`)
  for (const instance of instances) {
    console.log(
      `  RSS ${instance.name} (MB, 1 s)      ${instance.rss.map((mb) => mb.toFixed(0)).join(' ')}${instance.exited ? '  (EXITED)' : ''}`,
    )
    if (instance.exited) exitCode = 1
  }
  if (unresolved.length > 0 || duplicatedOrders !== 0 || unexpected.length > 0) exitCode = 1
  console.log(exitCode === 0 ? '\nchaos: nothing lost, nothing duplicated, no unexpected 5xx' : '\nchaos: FAILED')
} finally {
  stopping = true
  for (const c of clients) await c.dispose()
  for (const instance of instances) instance.child.kill('SIGTERM')
  await sleep(500)
  for (const instance of instances) if (!instance.exited) instance.child.kill('SIGKILL')
  await control.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => {})
  await control.end()
}
process.exit(exitCode)

/** A short-lived connection to the chaos database: a long-lived one would be among the terminated backends. */
async function queryTarget<Row extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<Row>> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    return await client.query<Row>(text, values)
  } finally {
    await client.end()
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  return sorted[Math.floor(sorted.length / 2)]!
}
