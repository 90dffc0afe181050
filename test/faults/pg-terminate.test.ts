/**
 * A lost database connection never ends the process (decisions §12): the requests it was serving
 * answer 503 DATABASE_UNAVAILABLE, and the service recovers by itself. Backends are terminated
 * only in this test's own database (filtered by datname), never anyone else's.
 */
import t from 'tap'
import pg from 'pg'
import { bearer, build, createTestDatabase, tokenFor } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { cloneDatabase, startServer } from './server-process.ts'

const SKIP = postgresUrl()
  ? false
  : 'needs a PostgreSQL server (DATABASE_URL): PGlite is one in-process session, with no backend to terminate'

const TERMINATE_OTHERS = `select count(*)::int as terminated from (
  select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) as killed`

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test(
  "a backend terminated inside a request's transaction: that request is 503 DATABASE_UNAVAILABLE, the process lives on, the retry creates the order once",
  { skip: SKIP },
  async (t) => {
    const database = await createTestDatabase(t)
    const app = await build(t, { database })
    const name = new URL(database.url!).pathname.slice(1)
    const locker = new pg.Client({ connectionString: database.url })
    // A session of its own to watch and terminate: pg_stat_activity is a snapshot taken once per
    // transaction, and the locker stays in one.
    const observer = new pg.Client({ connectionString: database.url })
    await Promise.all([locker.connect(), observer.connect()])
    t.teardown(() => Promise.all([locker.end(), observer.end()]))

    // The create blocks on the lock, inside its transaction, with its pooled client checked out.
    await locker.query('begin')
    await locker.query('lock table orders in access exclusive mode')
    const request = {
      method: 'POST' as const,
      url: '/api/v1/orders',
      headers: { ...bearer(2, 'orders:write'), 'content-type': 'application/json', 'idempotency-key': 'terminated-under-a-transaction' },
      payload: { items: [{ sku: 'KB-101', qty: 1 }] },
    }
    const pending = app.inject(request)
    const waiting = `select pid from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`
    await waitFor(async () => (await observer.query(waiting, [name])).rows.length > 0, 'the create to wait on the lock')
    const { rows } = await observer.query(`select pg_terminate_backend(pid) as terminated from (${waiting}) as waiting`, [name])
    t.same(rows, [{ terminated: true }], "the request's backend, and only it, was terminated")
    const failed = await pending
    t.equal(failed.statusCode, 503)
    t.match(failed.headers['content-type'], /^application\/problem\+json/)
    t.equal(failed.headers['retry-after'], '5')
    t.match(failed.json(), { status: 503, code: 'DATABASE_UNAVAILABLE' })
    t.notMatch(failed.body, /terminat|administrator|57P01|insert/i, 'no driver message or SQL leaks')
    await locker.query('rollback')

    const retried = await app.inject(request)
    t.equal(retried.statusCode, 201, 'the pool opened a new connection; the retry succeeds')
    t.not(retried.headers['idempotent-replayed'], 'true', "the 503 was not stored as the key's outcome")
    const stored = await database.db
      .selectFrom('idempotency_keys')
      .select('body')
      .where('key', '=', request.headers['idempotency-key'])
      .execute()
    t.equal(stored.length, 1)
    t.equal((stored[0]!.body as { id: number }).id, retried.json().id)
  },
)

interface Attempt {
  startedAt: number
  endedAt: number
  status: number | 'network-error'
}

t.test(
  'keyed creates under repeated pg_terminate_backend: the server process survives, every key is exactly one order, never a 500',
  { skip: SKIP },
  async (t) => {
    const KEYS = 300
    const CONCURRENCY = 8
    const KILLS = 6
    const clone = await cloneDatabase(t, postgresUrl()!)
    const server = await startServer(t, clone.url)
    const observer = new pg.Client({ connectionString: clone.url })
    await observer.connect()
    t.teardown(() => observer.end())
    const seeded = (await observer.query('select count(*)::int as n from orders')).rows[0].n as number

    const token = tokenFor(2, 'orders:write')
    const attempts: Attempt[] = []
    const created = new Map<string, number>()
    const unexpected: string[] = []
    const keys = Array.from({ length: KEYS }, (_, i) => `fault-${i}`)
    let next = 0
    let done = false

    const createOnce = async (key: string): Promise<void> => {
      for (let attempt = 0; attempt < 500 && !server.exit; attempt += 1) {
        const startedAt = performance.now()
        let status: Attempt['status']
        let body: { id?: number } | undefined
        try {
          const response = await fetch(`${server.baseUrl}/api/v1/orders`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ items: [{ sku: 'MS-202', qty: 1 }] }),
          })
          status = response.status
          body = (await response.json()) as { id?: number }
        } catch {
          status = 'network-error'
        }
        attempts.push({ startedAt, endedAt: performance.now(), status })
        if (status === 201) {
          created.set(key, body!.id!)
          return
        }
        if (status !== 503 && status !== 409 && status !== 'network-error') {
          unexpected.push(`${key}: ${status} ${JSON.stringify(body)}`)
          return
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      unexpected.push(
        server.exit ? `${key}: the server exited (${JSON.stringify(server.exit)})` : `${key}: still failing after 500 attempts`,
      )
    }

    const load = Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < keys.length && !server.exit) await createOnce(keys[next++]!)
      }),
    ).finally(() => {
      done = true
    })

    // Terminations spread over the load, from a connection of the test's own.
    const kills: Array<{ at: number; terminated: number }> = []
    while (!done && kills.length < KILLS) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      if (done) break
      const at = performance.now()
      const { rows } = await observer.query(TERMINATE_OTHERS, [clone.name])
      kills.push({ at, terminated: rows[0].terminated as number })
    }
    await load

    t.equal(server.exit, undefined, 'the server process is still running')
    const health = await fetch(`${server.baseUrl}/healthz`)
    t.equal(health.status, 200, 'and answering')
    t.ok(kills.length >= 3, `backends were terminated ${kills.length} times during the load`)
    t.ok(
      kills.some((kill) => kill.terminated > 0),
      "the terminations hit the server's connections",
    )
    t.same(unexpected, [], 'every answer was 201, 409 (key in use), 503 or a dropped connection')
    t.equal(attempts.filter((a) => a.status === 500).length, 0, 'never a 500')
    const disrupted = attempts.filter((a) => a.status === 503 || a.status === 'network-error').length
    t.ok(disrupted > 0, `the terminations disrupted requests (${disrupted} answered 503 or dropped)`)
    t.equal(created.size, KEYS, 'every key ended in a 201')

    const stored = await observer.query<{ key: string; status: number; order_id: number }>(
      `select key, status, (body->>'id')::int as order_id from idempotency_keys where caller = '2' and key like 'fault-%'`,
    )
    t.equal(stored.rows.length, KEYS, 'one stored outcome per key')
    t.ok(
      stored.rows.every((row) => row.status === 201 && created.get(row.key) === row.order_id),
      'each the order its client was given',
    )
    t.equal(new Set(stored.rows.map((row) => row.order_id)).size, KEYS, 'no two keys share an order')
    const total = (await observer.query('select count(*)::int as n from orders')).rows[0].n as number
    t.equal(total, seeded + KEYS, 'and no order beyond one per key')

    // Recovery: after each termination, how long until a request sent after it succeeded.
    const recoveries = kills.map((kill) => {
      const first = attempts.filter((a) => a.startedAt >= kill.at && a.status === 201).sort((a, b) => a.endedAt - b.endedAt)[0]
      return first ? first.endedAt - kill.at : undefined
    })
    const measured = recoveries.filter((ms): ms is number => ms !== undefined)
    t.comment(
      `${attempts.length} requests for ${KEYS} keys; ${disrupted} answered 503 or dropped, ${attempts.filter((a) => a.status === 409).length} 409; ` +
        `${kills.length} terminations (${kills.map((k) => k.terminated).join(', ')} backends); ` +
        `first 201 after each: ${measured.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`,
    )
    t.ok(
      server.warnings.some((w) => w.msg === 'database connection lost'),
      'the lost connections were logged as warnings',
    )
  },
)
