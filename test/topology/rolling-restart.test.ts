/**
 * A rolling restart behind a load balancer drops no request (decisions §13). HAProxy
 * (test/topology/haproxy.ts) health-checks two service instances (real processes, one
 * PostgreSQL database) on /readyz; steady keyed creates, reads and a subscription run through it
 * while every instance in turn gets SIGTERM and is started again on its port. Counted: no failed
 * request (a 503 with Retry-After is retried after it, as docs/operations.md tells clients to), every
 * keyed create exactly one order, every instance exiting 0, and the subscriber, whose instance goes
 * down, reconnecting and resuming after the last event id it received (`orderCreated(after:)`, the
 * id each event message carries as `extensions.eventId`): every order created during the restarts
 * reaches it exactly once.
 */
import t from 'tap'
import WebSocket from 'ws'
import { createClient } from 'graphql-ws'
import pg from 'pg'
import { bearer, tokenFor } from '../helper.ts'
import { eventually } from '../graphql/subscription-clients.ts'
import { postgresUrl } from '../setup/templates.ts'
import { freePort } from '../faults/private-cluster.ts'
import { cloneDatabase, startServer, type ServerProcess } from '../faults/server-process.ts'
import { haproxyUnavailable, startHaProxy } from './haproxy.ts'

const SKIP = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set): several instances share one PostgreSQL database'
  : process.env.CI
    ? false
    : (haproxyUnavailable() ?? false)

const INSTANCES = 2
const WRITERS = 3
const READERS = 2
/** Longer than HAProxy takes to see a 503: 2 checks 300 ms apart (a 503 /readyz answers at once). */
const ENV = { SHUTDOWN_DRAIN: '2s' }
/** Between one worker's requests: a steady load, not a saturating one (the machine is shared). */
const PAUSE_MS = 10
const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS))

interface Failure {
  request: string
  status?: number
  error?: string
}

t.test('a rolling restart of two instances behind HAProxy drops no request', { skip: SKIP }, async (t) => {
  const clone = await cloneDatabase(t, postgresUrl()!)
  const ports = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()))
  const servers: ServerProcess[] = await Promise.all(ports.map((port) => startServer(t, clone.url, { ...ENV, PORT: String(port) })))
  const proxy = await startHaProxy(t, ports)
  for (const port of ports) await proxy.waitUntilUp(port)

  const failures: Failure[] = []
  let running = true
  // A broken run stops early rather than failing thousands of requests.
  const failed = (failure: Failure) => {
    failures.push(failure)
    if (failures.length >= 20) running = false
  }
  let retried = 0
  let requests = 0
  /** fetch, retrying a 503 that carries Retry-After after that many seconds (the client rule of docs/operations.md). */
  const send = async (name: string, path: string, init: RequestInit = {}): Promise<Response | undefined> => {
    for (;;) {
      requests++
      let response: Response
      try {
        response = await fetch(`${proxy.baseUrl}${path}`, init)
      } catch (error) {
        failed({ request: name, error: String((error as Error).cause ?? error) })
        return undefined
      }
      const retryAfter = response.headers.get('retry-after')
      if (response.status === 503 && retryAfter !== null) {
        retried++
        await response.arrayBuffer()
        await new Promise((resolve) => setTimeout(resolve, Number(retryAfter) * 1000))
        continue
      }
      return response
    }
  }

  // Keyed creates: each key's answers, and the order ids they name.
  const created = new Map<string, number>()
  const writer = async (w: number) => {
    for (let n = 0; running; n++) {
      await pause()
      const key = `rolling-${w}-${n}`
      const response = await send(`create ${key}`, '/api/v1/orders', {
        method: 'POST',
        headers: { ...bearer(2, 'orders:write'), 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
      })
      if (!response) continue
      if (response.status !== 201) {
        failed({ request: `create ${key}`, status: response.status, error: await response.text() })
        continue
      }
      created.set(key, ((await response.json()) as { id: number }).id)
    }
  }
  const reader = async () => {
    while (running) {
      await pause()
      const ids = [...created.values()]
      const path = ids.length > 0 ? `/api/v1/orders/${ids[Math.floor(Math.random() * ids.length)]}` : '/api/v1/orders?limit=5'
      const response = await send(`read ${path}`, path, { headers: bearer(2, 'orders:read') })
      if (!response) continue
      if (response.status !== 200) failed({ request: `read ${path}`, status: response.status, error: await response.text() })
      else await response.arrayBuffer()
    }
  }

  // A subscriber through HAProxy that reconnects (graphql-ws resubscribes on the new connection,
  // sending the payload object it was given: `after` moves with every event received, so a
  // resubscription resumes where the last connection stopped).
  let connections = 0
  const deliveries = new Map<number, number>()
  const subscription = {
    query: 'subscription Orders($after: ID) { orderCreated(after: $after) { databaseId } }',
    variables: {} as { after?: string },
  }
  const subscriber = createClient({
    url: `${proxy.baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 20,
    retryWait: () => new Promise((resolve) => setTimeout(resolve, 100)),
    shouldRetry: () => true,
    onNonLazyError: () => {},
    connectionParams: { Authorization: `Bearer ${tokenFor(2, 'orders:read')}` },
    on: { connected: () => void connections++ },
  })
  t.teardown(() => subscriber.dispose())
  const closeCodes: number[] = []
  subscriber.on('closed', (event) => void closeCodes.push((event as { code: number }).code))
  subscriber.subscribe<{ orderCreated: { databaseId: number } }>(subscription, {
    next: (message) => {
      const eventId = (message.extensions as { eventId?: unknown } | undefined)?.eventId
      if (typeof eventId === 'string') subscription.variables.after = eventId
      if (message.data) {
        const id = message.data.orderCreated.databaseId
        deliveries.set(id, (deliveries.get(id) ?? 0) + 1)
      }
    },
    error: (error) => void failed({ request: 'subscription', error: String(error) }),
    complete: () => {},
  })
  t.ok(await eventually(() => connections === 1), 'subscribed')
  // The subscription is live once it receives an order created now; every later event has an id above it.
  const marker = await send('create marker', '/api/v1/orders', {
    method: 'POST',
    headers: { ...bearer(2, 'orders:write'), 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
  })
  t.equal(marker?.status, 201)
  const markerId = ((await marker!.json()) as { id: number }).id
  t.ok(await eventually(() => deliveries.has(markerId), 10_000), 'the subscription is live')

  const started = performance.now()
  const load = [...Array.from({ length: WRITERS }, (_, w) => writer(w)), ...Array.from({ length: READERS }, () => reader())]
  await new Promise((resolve) => setTimeout(resolve, 500))
  for (let i = 0; i < servers.length; i++) {
    const old = servers[i]!
    const exited = new Promise<void>((resolve) => old.child.once('exit', () => resolve()))
    old.child.kill('SIGTERM')
    await exited
    t.same(old.exit, { code: 0, signal: null }, `instance ${i + 1} shut down cleanly`)
    servers[i] = await startServer(t, clone.url, { ...ENV, PORT: String(ports[i]) })
    await proxy.waitUntilUp(ports[i]!)
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  running = false
  await Promise.all(load)
  const elapsed = performance.now() - started

  t.same(failures.slice(0, 5), [], `no request failed (${failures.length} did)`)
  t.comment(
    `${requests} requests (${created.size} keyed creates) in ${(elapsed / 1000).toFixed(1)} s across ${INSTANCES} restarts; ${retried} answered 503 with Retry-After and were retried`,
  )
  t.ok(created.size > 0, 'creates ran throughout')
  const admin = new pg.Client({ connectionString: clone.url })
  await admin.connect()
  t.teardown(() => admin.end())
  const ids = [...created.values()]
  const stored = await admin.query<{ count: string }>('select count(*) from orders where id = any($1)', [ids])
  t.equal(new Set(ids).size, created.size, 'each key its own order')
  t.equal(Number(stored.rows[0]!.count), created.size, 'every keyed create stored')
  const stray = await admin.query<{ count: string }>(
    `select count(*) from idempotency_keys where key like 'rolling-%' and not (key = any($1))`,
    [[...created.keys()]],
  )
  t.equal(Number(stray.rows[0]!.count), 0, 'no key stored without its answer reaching the client')
  // Every order after the marker is one of the keyed creates: none was made twice (a request the
  // balancer or the client sent again) or without its key.
  const since = await admin.query<{ count: string }>('select count(*) from orders where id > $1', [markerId])
  t.equal(Number(since.rows[0]!.count), created.size, 'no other order was created during the restarts: each key exactly once')

  t.ok(connections > 1, `the subscriber reconnected (${connections} connections, closes ${closeCodes.join(', ')})`)
  t.ok(closeCodes.includes(1001), 'its instance closed it with 1001 Going Away')
  // What is created after the restarts reaches the reconnected subscriber, and so did everything
  // created while it was reconnecting: each order exactly once.
  const last = await send('create after', '/api/v1/orders', {
    method: 'POST',
    headers: { ...bearer(2, 'orders:write'), 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
  })
  t.equal(last?.status, 201)
  const lastId = ((await last!.json()) as { id: number }).id
  t.ok(await eventually(() => deliveries.has(lastId), 10_000), 'the reconnected subscriber receives new events')
  const missed = [...created.values()].filter((id) => !deliveries.has(id))
  t.same(missed, [], `no order created during the restarts is missed (${deliveries.size} of ${created.size + 2} received)`)
  const twice = [...deliveries].filter(([, count]) => count > 1)
  t.same(twice, [], 'none is received twice')
})
