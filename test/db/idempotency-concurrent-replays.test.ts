/**
 * Replays of a finished Idempotency-Key under concurrency (decisions §7, "Replays under
 * concurrency"): 50 replays at once of a create that completed all get its stored answer, 201
 * replayed with the same order, never 409, on the database directly and, with PostgreSQL, behind
 * PgBouncer in transaction pooling; the key's first request still running stays 409.
 */
import pg from 'pg'
import t, { type Test } from 'tap'
import { cloneDatabase, startServer } from '../faults/server-process.ts'
import { bearer, build, createTestDatabase } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { pgbouncerUnavailable, startPgBouncer } from '../topology/pgbouncer.ts'

const REPLAYS = 50
const grace = { ...bearer(2, 'orders:write'), 'content-type': 'application/json' }
const body = JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] })

interface Answer {
  status: number
  replayed: string | null
  id: unknown
}

/** The first create with `key`, then REPLAYS replays of it at once; every answer. */
async function firstThenReplays(send: () => Promise<Answer>): Promise<{ first: Answer; replays: Answer[] }> {
  const first = await send()
  const replays = await Promise.all(Array.from({ length: REPLAYS }, () => send()))
  return { first, replays }
}

function assertAllStored(t: Test, { first, replays }: { first: Answer; replays: Answer[] }) {
  t.equal(first.status, 201, 'the first request creates')
  t.same(
    replays.map((answer) => answer.status).filter((status) => status !== 201),
    [],
    `${REPLAYS} concurrent replays: every one 201 (no 409)`,
  )
  t.ok(
    replays.every((answer) => answer.replayed === 'true' && answer.id === first.id),
    'each the stored answer: Idempotent-Replayed, the same order',
  )
}

t.test('50 concurrent replays of a finished key all get its stored answer', async (t) => {
  // Connections enough that the replays meet at the key's lock, not in the pool's queue, and time
  // enough that a loaded machine does not turn a wait for one into a 503.
  const app = await build(t, { poolSize: 25, statementTimeoutMs: 30_000, connectTimeoutMs: 30_000, env: { EVENTS_RELAY: 'false' } })
  const send = async (): Promise<Answer> => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...grace, 'idempotency-key': 'replays-direct' },
      payload: body,
    })
    return { status: response.statusCode, replayed: String(response.headers['idempotent-replayed'] ?? null), id: response.json().id }
  }
  assertAllStored(t, await firstThenReplays(send))
})

t.test(
  'while another transaction holds the key, a finished key replays and a running one is 409',
  { skip: postgresUrl() ? false : 'PGlite runs one session: no other transaction can hold the lock' },
  async (t) => {
    const database = await createTestDatabase(t)
    const app = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
    const send = (key: string) =>
      app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': key }, payload: body })
    const first = await send('finished')
    t.equal(first.statusCode, 201)
    // Another request holds each key's lock (a replay reading, or a first request running).
    const holder = new pg.Client({ connectionString: database.url })
    await holder.connect()
    t.teardown(() => holder.end())
    await holder.query('begin')
    await holder.query(
      `select pg_advisory_xact_lock(hashtextextended('2:finished', 7)), pg_advisory_xact_lock(hashtextextended('2:running', 7))`,
    )
    const replay = await send('finished')
    t.equal(replay.statusCode, 201, 'a finished key: its stored answer')
    t.equal(replay.headers['idempotent-replayed'], 'true')
    t.equal(replay.json().id, first.json().id)
    const running = await send('running')
    t.equal(running.statusCode, 409, 'a key with no outcome yet, its first request running: 409')
    t.equal(running.json().code, 'IDEMPOTENCY_KEY_IN_USE')
    t.equal(running.headers['retry-after'], '1')
    await holder.query('rollback')
    t.equal((await send('running')).statusCode, 201, 'once the first request is gone, the key runs')
  },
)

const SKIP_BOUNCER = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set): PgBouncer fronts a PostgreSQL server'
  : process.env.CI
    ? false
    : (pgbouncerUnavailable() ?? false)

t.test('behind PgBouncer in transaction pooling, 50 concurrent replays all get the stored answer', { skip: SKIP_BOUNCER }, async (t) => {
  const serverUrl = postgresUrl()!
  const clone = await cloneDatabase(t, serverUrl)
  const bouncer = await startPgBouncer(t, serverUrl)
  // Pooled, said rather than found out: a probe that times out on a loaded machine would count as direct.
  const server = await startServer(t, bouncer.through(clone.url), { DB_POOLED: 'true', DB_STATEMENT_TIMEOUT: '30s' })
  const send = async (): Promise<Answer> => {
    const response = await fetch(`${server.baseUrl}/api/v1/orders`, {
      method: 'POST',
      headers: { ...grace, 'idempotency-key': 'replays-pooled' },
      body,
    })
    const json = (await response.json()) as { id?: unknown }
    return { status: response.status, replayed: response.headers.get('idempotent-replayed'), id: json.id }
  }
  assertAllStored(t, await firstThenReplays(send))
})
