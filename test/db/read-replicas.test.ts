/**
 * Read replicas (decisions §15), on a private primary and a streaming replica of its own
 * (test/faults/private-replica.ts): other callers' reads are served by the replica; a caller never
 * reads the state before its own write, through another instance, REST and GraphQL, with the
 * position sent back (Read-After-LSN) or remembered in Redis; a replica that lags, is stopped or
 * frozen under a read load costs no 5xx, reads move to the primary and come back.
 */
import t, { type Test as Tap } from 'tap'
import type { FastifyInstance } from 'fastify'
import { createDatabase } from '../../src/db/database.ts'
import { bearer, build, reachableRedis } from '../helper.ts'
import { freezableRelay } from '../faults/freezable-relay.ts'
import { privateClusterUnavailable, startPrivateCluster } from '../faults/private-cluster.ts'
import { startPrivateReplica } from '../faults/private-replica.ts'
import { postgresUrl } from '../setup/templates.ts'

const unavailable = privateClusterUnavailable()
const grace = bearer(2, 'orders:read orders:write')
const alan = bearer(3, 'orders:read orders:write')
const items = [{ sku: 'KB-101', qty: 1 }]

type Test = Parameters<typeof build>[0]

async function cluster(t: Test) {
  const primary = await startPrivateCluster(t)
  const replica = await startPrivateReplica(t, primary)
  await replica.caughtUp()
  return { primary, replica }
}

async function instance(t: Test, primaryUrl: string, replicaUrl: string, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const database = await createDatabase({ url: primaryUrl, poolSize: 5 })
  t.teardown(() => database.close())
  return build(t, { database, env: { DATABASE_REPLICA_URLS: replicaUrl, EVENTS_RELAY: 'false', RATE_LIMIT_MAX: '1000000', ...env } })
}

const replicaReads = (app: FastifyInstance) =>
  Object.entries(app.replicas?.reads() ?? {}).find(([server]) => server !== 'primary')?.[1] ?? 0
const primaryReads = (app: FastifyInstance) => app.replicas?.reads().primary ?? 0

async function until(condition: () => boolean, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// Building the private primary and its replica (initdb, migrations, pg_basebackup) takes minutes
// on a loaded 2-core machine, longer than the suite's per-file default.
t.setTimeout(600_000)

// Once per CI run: the PostgreSQL suite runs it (its private cluster needs no DATABASE_URL, but
// building it twice would cost CI minutes for nothing the PGlite run adds).
const skipReplicas = unavailable ?? (postgresUrl() ? false : 'runs with the PostgreSQL suite (DATABASE_URL set)')

t.test('replicas', { skip: skipReplicas, timeout: 500_000 }, async (t) => {
  const { primary, replica } = await cluster(t)

  t.test("other callers' reads are served by the replica, and /readyz and /metrics show it", async (t) => {
    const app = await instance(t, primary.url, replica.url)
    const before = replicaReads(app)
    for (let i = 0; i < 10; i++) t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders', headers: alan })).statusCode, 200)
    t.ok(replicaReads(app) - before >= 10, `the replica served the reads (${replicaReads(app) - before})`)
    t.equal(primaryReads(app), 0, 'the primary served none of them')
    const ready = await app.inject({ method: 'GET', url: '/readyz' })
    t.match(ready.json().replicas, [{ state: 'up', lagSeconds: Number }])
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    t.match(metrics.body, /db_replica_up\{replica="[^"]+",state="up"\} 1/)
    t.match(metrics.body, /db_replica_lag_seconds\{replica="[^"]+"\} [0-9.]+/)
  })

  const readsOwnWrite = async (t: Tap, writer: FastifyInstance, reader: FastifyInstance, sendPosition: boolean) => {
    await until(() => reader.replicas?.status()[0]?.state === 'up', 'the replica is up')
    // Replay paused: the replica is behind the write for as long as this test needs, yet within the lag limit.
    await replica.query('select pg_wal_replay_pause()')
    try {
      for (let i = 0; i < 5; i++) {
        const created = await writer.inject({ method: 'POST', url: '/api/v1/orders', headers: grace, payload: { items } })
        t.equal(created.statusCode, 201)
        const position = created.headers['read-after-lsn']
        t.match(position, /^[0-9A-F]+\/[0-9A-F]+$/, 'the write names its commit position')
        const headers = sendPosition && typeof position === 'string' ? { ...grace, 'read-after-lsn': position } : grace
        const id = created.json().id
        const read = await reader.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers })
        t.equal(read.statusCode, 200, `iteration ${i}: the order just created is read back (REST)`)
        const query = await reader.inject({
          method: 'POST',
          url: '/graphql',
          headers,
          payload: { query: `{ order(id: "${id}") { databaseId } }` },
        })
        t.same(query.json().data, { order: { databaseId: id } }, `iteration ${i}: and through GraphQL`)
        // Another caller is served by the replica meanwhile, which has not replayed the write.
        const before = replicaReads(reader)
        const other = await reader.inject({ method: 'GET', url: '/api/v1/orders', headers: alan })
        t.equal(other.statusCode, 200)
        t.ok(replicaReads(reader) > before, `iteration ${i}: another caller's read went to the replica`)
      }
    } finally {
      await replica.query('select pg_wal_replay_resume()')
    }
  }

  t.test('a caller reads its own write through another instance when it sends Read-After-LSN back', async (t) => {
    const a = await instance(t, primary.url, replica.url)
    const b = await instance(t, primary.url, replica.url)
    await readsOwnWrite(t, a, b, true)
  })

  t.test('a caller that sends nothing reads its own write through another instance, with Redis', async (t) => {
    const redis = await reachableRedis(t)
    if (!redis) return
    const a = await instance(t, primary.url, replica.url, { REDIS_URL: redis })
    const b = await instance(t, primary.url, replica.url, { REDIS_URL: redis })
    await readsOwnWrite(t, a, b, false)
  })

  t.test('a caller that sends nothing reads its own write on the same instance, without Redis', async (t) => {
    const a = await instance(t, primary.url, replica.url)
    await readsOwnWrite(t, a, a, false)
  })

  const readLoad = (app: FastifyInstance) => {
    const statuses: number[] = []
    let stop = false
    const loop = async () => {
      while (!stop) statuses.push((await app.inject({ method: 'GET', url: '/api/v1/orders', headers: alan })).statusCode)
    }
    const running = Promise.all([loop(), loop(), loop()])
    return {
      statuses,
      async end() {
        stop = true
        await running
        return statuses
      },
    }
  }
  const state = (app: FastifyInstance) => app.replicas?.status()[0]?.state

  /** Under a read load: `fault` makes the replica `expected`, reads move to the primary, `recover` brings it back, reads come back; no 5xx. */
  const leftOutAndBack = async (
    t: Tap,
    app: FastifyInstance,
    expected: 'lagging' | 'down',
    fault: () => Promise<unknown>,
    recover: () => Promise<unknown>,
  ) => {
    await until(() => state(app) === 'up', 'the replica is up')
    const load = readLoad(app)
    try {
      await fault()
      await until(() => state(app) === expected, `the replica is left out as ${expected}`)
      const primaryBefore = primaryReads(app)
      await until(() => primaryReads(app) > primaryBefore + 5, 'reads go to the primary')
      t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'the instance stays ready')
    } finally {
      await recover()
    }
    await until(() => state(app) === 'up', 'the replica is back')
    const replicaBefore = replicaReads(app)
    await until(() => replicaReads(app) > replicaBefore + 5, 'reads come back to the replica')
    const statuses = await load.end()
    t.same(
      statuses.filter((status) => status >= 500),
      [],
      `no 5xx in ${statuses.length} reads`,
    )
  }

  t.test('a replica lagging past the limit serves nothing until it catches up; no 5xx', async (t) => {
    const app = await instance(t, primary.url, replica.url, { DATABASE_REPLICA_MAX_LAG: '1s' })
    // Writes move the primary on while replay is paused: the replica falls behind.
    let writing: NodeJS.Timeout | undefined
    const write = () => void app.inject({ method: 'POST', url: '/api/v1/orders', headers: grace, payload: { items } })
    await leftOutAndBack(
      t,
      app,
      'lagging',
      async () => {
        await replica.query('select pg_wal_replay_pause()')
        writing = setInterval(write, 100)
      },
      async () => {
        clearInterval(writing)
        await replica.query('select pg_wal_replay_resume()')
      },
    )
  })

  t.test('a replica stopped serves nothing until it is back; no 5xx', async (t) => {
    const app = await instance(t, primary.url, replica.url)
    await leftOutAndBack(t, app, 'down', replica.stop, replica.start)
  })

  t.test('a replica frozen (answers nothing) serves nothing until it answers again; no 5xx', async (t) => {
    const relay = await freezableRelay(t, new URL(replica.url))
    const app = await instance(t, primary.url, relay.url, { DB_STATEMENT_TIMEOUT: '1s', DATABASE_REPLICA_MAX_LAG: '1s' })
    await leftOutAndBack(
      t,
      app,
      'down',
      async () => relay.freeze(),
      async () => relay.thaw(),
    )
  })
})

t.test('replicas on PGlite are refused at start, with the reason', { skip: postgresUrl() ? 'PGlite only' : false }, async (t) => {
  await t.rejects(
    build(t, { env: { DATABASE_REPLICA_URLS: 'postgres://postgres@127.0.0.1:1/api' } }),
    /DATABASE_REPLICA_URLS needs PostgreSQL/,
  )
})
