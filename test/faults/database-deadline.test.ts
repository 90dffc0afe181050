/**
 * A request's database work is bounded as a whole, not per statement (decisions §12):
 * a transaction — BEGIN, an idempotency key's lock, the savepoint, the work, the stored outcome,
 * COMMIT — and a write that is one statement (decisions §7) end within DB_STATEMENT_TIMEOUT and its
 * margin (databaseWorkBoundMs), answering 503 DATABASE_UNAVAILABLE with Retry-After, however many
 * statements waited; and a shutdown while the database is frozen ends by itself within its grace
 * period.
 *
 * The bounds asserted are generous (1.5 s of slack for a loaded machine): they tell the bound
 * from what the per-statement timeouts gave (twice the bound for a frozen server, the statement
 * and then the ROLLBACK queued behind it; one statement timeout per lock waited on).
 */
import t, { type Test } from 'tap'
import type { InjectOptions } from 'fastify'
import { once } from 'node:events'
import pg from 'pg'
import { createDatabase, databaseWorkBoundMs } from '../../src/db/database.ts'
import { bearer, build, createTestDatabase, tokenFor } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { freezableRelay } from './freezable-relay.ts'
import { cloneDatabase, startServer } from './server-process.ts'
import { lockTable } from './table-lock.ts'

const SKIP = postgresUrl()
  ? false
  : 'needs a PostgreSQL server (DATABASE_URL): PGlite is one in-process session, with no lock another session holds and no server to freeze'

const SLACK_MS = 1500

const createOrder = (key?: string) => ({
  method: 'POST' as const,
  url: '/api/v1/orders',
  headers: { ...bearer(2, 'orders:write'), 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
  payload: { items: [{ sku: 'KB-101', qty: 1 }] },
})

/** The status of each order `ids` names, in that order, read on a connection of the test's own. */
async function orderStatuses(url: string, ids: readonly number[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ id: number; status: string }>('select id, status from orders where id = any($1)', [ids])
    return ids.map((id) => rows.find((row) => row.id === id)?.status ?? 'missing')
  } finally {
    await client.end()
  }
}

async function orderCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ n: number }>('select count(*)::int as n from orders')).rows[0]!.n
  } finally {
    await client.end()
  }
}

/** An order action (a write in a transaction of its own: src/db/write.ts, runWrite), with or without a key. */
const payOrder = (id: number, key?: string) => ({
  method: 'POST' as const,
  url: `/api/v1/orders/${id}/payment`,
  headers: { ...bearer(2, 'orders:write'), ...(key ? { 'idempotency-key': key } : {}) },
})

/**
 * An app on a database behind a relay that can freeze (statement timeout 1.5 s), and how a write
 * sent to a frozen server is checked: answered 503 DATABASE_UNAVAILABLE with Retry-After within the
 * bound, the connection whose statement went unanswered closed; the relay is thawed once answered.
 */
async function frozenDatabase(t: Test) {
  const bound = databaseWorkBoundMs(1500)
  const direct = await createTestDatabase(t)
  const relay = await freezableRelay(t, new URL(direct.url!))
  const handle = await createDatabase({ url: relay.url, poolSize: 3, statementTimeoutMs: 1500, logger: { warn: () => {} } })
  t.teardown(() => handle.close())
  let dropped = 0
  handle.pool!.on('release', (destroyed) => {
    if (destroyed) dropped += 1
  })
  const app = await build(t, { database: handle, env: { EVENTS_RELAY: 'false' } })
  const givenUp = async (which: string, request: InjectOptions, frozen?: Promise<void>) => {
    dropped = 0
    const started = performance.now()
    const response = await app.inject(request)
    const elapsed = performance.now() - started
    await frozen
    relay.thaw()
    t.equal(response.statusCode, 503, which)
    t.equal(response.headers['retry-after'], '5')
    t.match(response.json(), { code: 'DATABASE_UNAVAILABLE' })
    t.ok(elapsed < bound + SLACK_MS, `${which} answered after ${elapsed.toFixed(0)} ms; the bound is ${bound} ms`)
    t.ok(dropped >= 1, 'the connection whose statement went unanswered was closed, not pooled again')
  }
  return { direct, relay, handle, app, givenUp }
}

t.test(
  'a server that stops answering inside a write transaction: 503 within the bound (not twice it), the connection is closed, and a retry with the key pays the order once',
  { skip: SKIP },
  async (t) => {
    const { direct, relay, handle, app, givenUp } = await frozenDatabase(t)
    const orders: number[] = []
    for (let n = 0; n < 2; n++) orders.push((await app.inject(createOrder())).json().id)

    // The server stops answering right after the write's BEGIN: every later statement of the
    // transaction reaches it and gets no answer.
    let freezeAfterBegin = false
    handle.observeQueries((event) => {
      if (freezeAfterBegin && event.query.sql === 'begin') {
        freezeAfterBegin = false
        relay.freeze()
      }
    })
    const keyed = 'frozen-inside-the-transaction'
    for (const [id, key] of [
      [orders[0]!, undefined],
      [orders[1]!, keyed],
    ] as const) {
      freezeAfterBegin = true
      await givenUp(key ? 'the keyed write' : 'the write', payOrder(id, key))
    }

    // The server ends the abandoned session (and its lock on the key) once it reads the closed
    // connection; until then a retry is told the key is in use, with Retry-After, as a client is.
    let retried = await app.inject(payOrder(orders[1]!, keyed))
    for (let attempt = 0; retried.statusCode === 409 && retried.json().code === 'IDEMPOTENCY_KEY_IN_USE' && attempt < 50; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      retried = await app.inject(payOrder(orders[1]!, keyed))
    }
    t.equal(retried.statusCode, 200, 'after the thaw the retry runs: the 503 was not stored, its key was not left locked')
    t.equal(retried.headers['idempotent-replayed'], undefined)
    const replayed = await app.inject(payOrder(orders[1]!, keyed))
    t.equal(replayed.headers['idempotent-replayed'], 'true')
    t.same(
      await orderStatuses(direct.url!, orders),
      ['pending', 'paid'],
      'the frozen writes changed nothing; the retry paid its order once',
    )
  },
)

t.test(
  'a server that stops answering a write that is one statement: 503 within the bound, the connection is closed, and the retry with the key answers the one order',
  { skip: SKIP },
  async (t) => {
    const { direct, relay, app, givenUp } = await frozenDatabase(t)
    t.equal((await app.inject(createOrder())).statusCode, 201, 'through the relay, before the freeze')
    const before = await orderCount(direct.url!)

    // Frozen when the create's statement goes out (its event's topic is among its values): the
    // statement reaches the server, its answer does not.
    const key = 'frozen-one-statement'
    await givenUp('the create', createOrder(key), relay.freezeWhenSent('order.created'))

    // In autocommit the statement committed on the server, only its answer was lost (as a
    // COMMIT's answer can be): the retry with the key answers that order; without the statement
    // committed it would create it. Either way the key made one order.
    const retried = await app.inject(createOrder(key))
    t.equal(retried.statusCode, 201, 'the retry answers the order')
    const replayed = await app.inject(createOrder(key))
    t.equal(replayed.headers['idempotent-replayed'], 'true')
    t.equal(replayed.json().id, retried.json().id)
    t.equal(await orderCount(direct.url!), before + 1, 'one order for the key')
  },
)

t.test(
  'a write that waits on one lock after another: 503 within DB_STATEMENT_TIMEOUT and its margin as a whole, not one statement timeout per lock',
  { skip: SKIP },
  async (t) => {
    const statementTimeoutMs = 3000
    const bound = databaseWorkBoundMs(statementTimeoutMs)
    const database = await createTestDatabase(t, { statementTimeoutMs })
    const app = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
    const order: number = (await app.inject(createOrder())).json().id

    // An order action, a transaction of several statements, locks its order (orders), reads its
    // items (order_items), changes it, then records its event (outbox). Each lock is let go before
    // the statement waiting on it is cancelled, the last one never: per statement, the write would
    // take 0.7 + 0.7 + 1 statement timeouts. (A create is one statement, which its own timeout bounds.)
    const orders = await lockTable(t, database.url!, 'orders')
    const items = await lockTable(t, database.url!, 'order_items')
    const outbox = await lockTable(t, database.url!, 'outbox')
    const started = performance.now()
    const pending = app.inject(payOrder(order))
    const letGo = (lock: { release(): Promise<void> }, afterMs: number) =>
      new Promise<void>((resolve) => setTimeout(() => resolve(lock.release()), afterMs))
    const releases = Promise.all([letGo(orders, 0.7 * statementTimeoutMs), letGo(items, 1.4 * statementTimeoutMs)])
    const response = await pending
    const elapsed = performance.now() - started
    await releases
    t.equal(response.statusCode, 503)
    t.equal(response.headers['retry-after'], '5')
    t.match(response.json(), { code: 'DATABASE_UNAVAILABLE' })
    t.ok(elapsed < bound + SLACK_MS, `answered after ${elapsed.toFixed(0)} ms; the bound is ${bound} ms`)

    await outbox.release()
    t.same(await orderStatuses(database.url!, [order]), ['pending'], 'nothing of the refused write was stored')
    t.equal((await app.inject(payOrder(order))).statusCode, 200, 'once the locks are gone, writes succeed again')
  },
)

t.test(
  'SIGTERM while a write is stuck on a frozen server: the write is answered 503 and the process exits by itself (0), within its grace period',
  { skip: SKIP },
  async (t) => {
    const clone = await cloneDatabase(t, postgresUrl()!)
    const relay = await freezableRelay(t, new URL(clone.url))
    // Everything the process opens — its pool and its LISTEN connection — goes through the relay.
    const server = await startServer(t, relay.url)
    const write = () =>
      fetch(`${server.baseUrl}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenFor(2, 'orders:write')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
      })
    t.equal((await write()).status, 201, 'before the freeze')

    // Inside the write's transaction, as in the first test: the per-statement timeouts made such a
    // write outlast the grace period (its statement, then its ROLLBACK).
    // Frozen when the write's statement goes out, known by its event's topic among its values: its
    // text is on the wire only the first time a connection prepares it.
    const frozen = relay.freezeWhenSent('order.created')
    const stuck = write()
    await frozen
    const signalled = performance.now()
    const exited = once(server.child, 'exit')
    server.child.kill('SIGTERM')
    const response = await stuck
    t.equal(response.status, 503, 'the write in flight is answered, not cut off')
    t.match(await response.json(), { code: 'DATABASE_UNAVAILABLE' })
    t.equal(response.headers.get('connection'), 'close', 'and closes its connection: the shutdown does not wait for it to idle out')
    await exited
    const elapsed = performance.now() - signalled
    t.same(server.exit, { code: 0, signal: null }, 'the shutdown completed: close-with-grace exits 1 when it kills at its delay')
    t.notMatch(server.stderr, /killed by timeout/)
    t.ok(elapsed < 10_000, `exited ${elapsed.toFixed(0)} ms after SIGTERM; the grace period is 10 s`)
  },
)
