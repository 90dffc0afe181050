/**
 * `npm run bench -- --replica`: the read scenarios through one streaming replica beside the
 * primary-only run (decisions §15, docs/operations.md "Read replicas"). Opt-in: it builds a
 * private primary and a replica of its own (test/faults/private-cluster.ts, private-replica.ts;
 * never the shared server), which takes minutes.
 *
 * The service runs twice on the same seeded database, alternating round by round: `primary`
 * (DATABASE_URL only) and `replica` (DATABASE_REPLICA_URLS at the replica). Per scenario and
 * server: req/s and latency (autocannon), and which cluster ran the work: the committed
 * transactions of the bench database on each (pg_stat_database; a read outside a transaction is one),
 * over the round. Then read-your-writes: one caller creates an order and reads it back at once
 * (its read goes to the primary until the replica has replayed the write, decisions §15) against
 * a read of an older order by a caller that wrote nothing, sequentially, on each server.
 *
 * On one machine the primary, the replica and the service share the same cores: this shows what the
 * routing costs, never the capacity a replica adds (docs/operations.md, capacity arithmetic).
 */
import os from 'node:os'
import autocannon from 'autocannon'
import pg from 'pg'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { startPrivateCluster } from '../test/faults/private-cluster.ts'
import { startPrivateReplica } from '../test/faults/private-replica.ts'
import { adminQuery, withDatabase } from '../test/setup/templates.ts'
import { SERVICE_RUN_ENVIRONMENT } from './harness.ts'
import { median } from './ratios.ts'
import { benchSubjects, createScenarios, type ScenarioId } from './scenarios.ts'
import { type DataSetSize, seedDatabase } from './seed.ts'
import { type RunningServer, startServer } from './servers.ts'

const JWT_SECRET = 'bench-replica-secret-0123456789abcdef0123456789ab'
const DATABASE = 'bench'
const READ_SCENARIOS: ScenarioId[] = ['get-order', 'list-orders', 'graphql-orders']
type Setup = 'primary' | 'replica'

export interface ReplicaBenchOptions {
  size: DataSetSize
  rounds: number
  durationSeconds: number
  warmupSeconds: number
  connections: number
  /** Sequential create-then-read pairs per server in the read-your-writes part. */
  pairs: number
  log: (line: string) => void
}

interface Round {
  requestsPerSecond: number
  p50: number
  p99: number
  non2xx: number
  /** Transactions of the bench database committed on each cluster during the round, per request. */
  primaryXactsPerRequest: number
  replicaXactsPerRequest: number
}

export interface ReplicaBenchResults {
  measuredAt: string
  machine: { cpus: number; loadAverageAtStart: number[]; loadAverageAtEnd: number[]; node: string }
  dataSet: DataSetSize
  settings: { rounds: number; durationSeconds: number; connections: number; pairs: number }
  scenarios: Array<{ id: ScenarioId; title: string; rounds: Record<Setup, Round[]> }>
  readYourWrites: Record<Setup, { createMs: number | null; readAfterWriteMs: number | null; readWithoutWriteMs: number | null }>
}

const round2 = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100)
const loadAverage = () => os.loadavg().map((value) => Math.round(value * 100) / 100)

export async function runReplicaBench(options: ReplicaBenchOptions): Promise<ReplicaBenchResults> {
  const { log } = options
  const teardowns: Array<() => unknown> = []
  const owner = { teardown: (fn: () => unknown) => void teardowns.push(fn) }
  const loadAverageAtStart = loadAverage()
  try {
    // Commits are sent to the replica as they happen (synchronous_commit on, as in production); fsync stays off.
    const primary = await startPrivateCluster(owner, { settings: { synchronous_commit: 'on', max_connections: 200 } })
    const server = withDatabase(primary.url, 'postgres')
    await adminQuery(server, `create database ${DATABASE}`)
    const primaryUrl = withDatabase(primary.url, DATABASE)
    await seedDatabase({ url: primaryUrl }, options.size)
    const replica = await startPrivateReplica(owner, primary)
    await replica.caughtUp()
    const replicaUrl = withDatabase(replica.url, DATABASE)
    log(`private primary (port ${primary.port}) seeded with ${options.size.orders} orders; streaming replica caught up`)

    const sign = createTokenSigner(JWT_SECRET)
    const { orderId, userId } = benchSubjects(options.size)
    const tokens = {
      owner: sign({ sub: String(userId), scope: 'orders:read orders:write' }, 24 * 3600),
      admin: sign({ sub: '1', scope: 'admin' }, 24 * 3600),
    }
    const scenarios = createScenarios(options.size, tokens).filter((scenario) => READ_SCENARIOS.includes(scenario.id))
    const env = (setup: Setup) => ({
      ...SERVICE_RUN_ENVIRONMENT,
      JWT_SECRET,
      DATABASE_URL: primaryUrl,
      ...(setup === 'replica' ? { DATABASE_REPLICA_URLS: replicaUrl } : {}),
    })
    const servers: Record<Setup, RunningServer> = {
      primary: await startServer('service', env('primary')),
      replica: await startServer('service', env('replica')),
    }
    teardowns.push(() => Promise.all(Object.values(servers).map((running) => running.stop())))

    const monitors = { primary: new pg.Client({ connectionString: primaryUrl }), replica: new pg.Client({ connectionString: replicaUrl }) }
    await monitors.primary.connect()
    await monitors.replica.connect()
    teardowns.push(() => Promise.all([monitors.primary.end(), monitors.replica.end()]))
    const xacts = async (client: pg.Client) => {
      await client.query('select pg_stat_clear_snapshot()')
      const { rows } = await client.query<{ n: string }>(
        'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
      )
      return Number(rows[0]?.n ?? 0)
    }
    const settled = async () => {
      // A backend that has gone idle reports its transactions to pg_stat_database within 10 s
      // (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): waited out, so that each round counts its own.
      await new Promise((resolve) => setTimeout(resolve, 11_000))
      return { primary: await xacts(monitors.primary), replica: await xacts(monitors.replica) }
    }

    const results: ReplicaBenchResults = {
      measuredAt: new Date().toISOString(),
      machine: { cpus: os.cpus().length, loadAverageAtStart, loadAverageAtEnd: [], node: process.version },
      dataSet: options.size,
      settings: {
        rounds: options.rounds,
        durationSeconds: options.durationSeconds,
        connections: options.connections,
        pairs: options.pairs,
      },
      scenarios: [],
      readYourWrites: {
        primary: { createMs: null, readAfterWriteMs: null, readWithoutWriteMs: null },
        replica: { createMs: null, readAfterWriteMs: null, readWithoutWriteMs: null },
      },
    }

    for (const scenario of scenarios) {
      const request = scenario.request('service')
      const rounds: Record<Setup, Round[]> = { primary: [], replica: [] }
      const run = (setup: Setup, seconds: number) =>
        autocannon({
          url: servers[setup].baseUrl,
          connections: options.connections,
          duration: seconds,
          requests: [
            { method: request.method, path: request.path, headers: request.headers, ...(request.body ? { body: request.body } : {}) },
          ],
        })
      for (const setup of ['primary', 'replica'] as const) if (options.warmupSeconds > 0) await run(setup, options.warmupSeconds)
      let before = await settled()
      for (let round = 1; round <= options.rounds; round++) {
        for (const setup of ['primary', 'replica'] as const) {
          const result = await run(setup, options.durationSeconds)
          const after = await settled()
          const requests = result.requests.total || 1
          rounds[setup].push({
            requestsPerSecond: Math.round(result.requests.average),
            p50: result.latency.p50,
            p99: result.latency.p99,
            non2xx: result.non2xx + result.errors + result.timeouts,
            primaryXactsPerRequest: Math.round(((after.primary - before.primary) / requests) * 100) / 100,
            replicaXactsPerRequest: Math.round(((after.replica - before.replica) / requests) * 100) / 100,
          })
          before = after
          log(
            `${scenario.id} round ${round} ${setup}: ${Math.round(result.requests.average)} req/s, ${JSON.stringify(rounds[setup].at(-1))}`,
          )
        }
      }
      results.scenarios.push({ id: scenario.id, title: scenario.title, rounds })
    }

    // Read-your-writes: the caller's read right after its own write, against a read by a caller who wrote nothing.
    const writer = { authorization: `Bearer ${sign({ sub: String(userId), scope: 'orders:read orders:write' }, 3600)}` }
    const reader = { authorization: `Bearer ${tokens.admin}` }
    const timed = async (url: string, init: RequestInit) => {
      const started = performance.now()
      const response = await fetch(url, init)
      const body = await response.text()
      if (response.status >= 300) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${body.slice(0, 300)}`)
      return { ms: performance.now() - started, body, headers: response.headers }
    }
    const samples = {
      primary: { creates: [] as number[], readsAfter: [] as number[], readsWithout: [] as number[] },
      replica: { creates: [] as number[], readsAfter: [] as number[], readsWithout: [] as number[] },
    }
    // Pair by pair, the two setups in turn, so that drift in the machine's load hits both alike.
    for (let pair = 0; pair < options.pairs; pair++) {
      for (const setup of ['primary', 'replica'] as const) {
        const base = `${servers[setup].baseUrl}/api/v1`
        const created = await timed(`${base}/orders`, {
          method: 'POST',
          headers: { ...writer, 'content-type': 'application/json' },
          body: JSON.stringify({ items: [{ sku: 'SKU-001', qty: 1 }] }),
        })
        const id = (JSON.parse(created.body) as { id: number }).id
        const position = created.headers.get('read-after-lsn')
        const after = await timed(`${base}/orders/${id}`, { headers: { ...writer, ...(position ? { 'read-after-lsn': position } : {}) } })
        // Another caller's read of a record as old as the data set (the new order may not have reached the replica yet: §15 lets it lag for others).
        const without = await timed(`${base}/orders/${orderId}`, { headers: reader })
        if (pair >= 10) {
          // The first pairs warm the connections up.
          samples[setup].creates.push(created.ms)
          samples[setup].readsAfter.push(after.ms)
          samples[setup].readsWithout.push(without.ms)
        }
      }
    }
    for (const setup of ['primary', 'replica'] as const) {
      results.readYourWrites[setup] = {
        createMs: round2(median(samples[setup].creates)),
        readAfterWriteMs: round2(median(samples[setup].readsAfter)),
        readWithoutWriteMs: round2(median(samples[setup].readsWithout)),
      }
      log(`read-your-writes on ${setup}: ${JSON.stringify(results.readYourWrites[setup])}`)
    }
    results.machine.loadAverageAtEnd = loadAverage()
    return results
  } finally {
    for (const teardown of teardowns.reverse()) await Promise.resolve(teardown()).catch(() => {})
  }
}

/** The run as Markdown: bench/results/replica.md. */
export function renderReplicaMarkdown(results: ReplicaBenchResults): string {
  const medianOf = (rounds: Round[], pick: (round: Round) => number) => median(rounds.map(pick))
  const lines = [
    '# Reads through one streaming replica (npm run bench -- --replica)',
    '',
    `Measured ${results.measuredAt} on ${results.machine.cpus} CPUs, Node ${results.machine.node}; load average ${results.machine.loadAverageAtStart.join(', ')} at the start, ${results.machine.loadAverageAtEnd.join(', ')} at the end.`,
    `${results.dataSet.orders} orders; ${results.settings.rounds} rounds of ${results.settings.durationSeconds} s at ${results.settings.connections} connections, the two setups alternating.`,
    '',
    'One machine: the primary, the replica and the service share the same cores, so this shows what routing through a replica costs, not the capacity it adds (docs/operations.md, "Read replicas").',
    '',
    '| Scenario | Setup | req/s (median) | p50 ms | p99 ms | primary xacts/request | replica xacts/request | replica share | non-2xx |',
    '|---|---|---|---|---|---|---|---|---|',
  ]
  for (const scenario of results.scenarios) {
    for (const setup of ['primary', 'replica'] as const) {
      const rounds = scenario.rounds[setup]
      const primaryXacts = medianOf(rounds, (round) => round.primaryXactsPerRequest) ?? 0
      const replicaXacts = medianOf(rounds, (round) => round.replicaXactsPerRequest) ?? 0
      const share = primaryXacts + replicaXacts > 0 ? `${Math.round((replicaXacts / (primaryXacts + replicaXacts)) * 100)} %` : '–'
      lines.push(
        `| ${scenario.id} | ${setup === 'primary' ? 'primary only' : 'one replica'} | ${medianOf(rounds, (round) => round.requestsPerSecond)} | ${medianOf(rounds, (round) => round.p50)} | ${medianOf(rounds, (round) => round.p99)} | ${primaryXacts} | ${replicaXacts} | ${share} | ${rounds.reduce((sum, round) => sum + round.non2xx, 0)} |`,
      )
    }
  }
  lines.push(
    '',
    `Read-your-writes (sequential, one connection, ${results.settings.pairs} pairs less 10 of warm-up, the two setups in turn, medians in ms): a caller creates an order and reads it back at once, sending its Read-After-LSN (with a replica that read goes to the primary unless the replica has replayed the write); then another caller, who wrote nothing, reads an order of the data set (from the replica).`,
    '',
    '| Setup | create | read right after the own write | read by a caller with no write |',
    '|---|---|---|---|',
    ...(['primary', 'replica'] as const).map((setup) => {
      const r = results.readYourWrites[setup]
      return `| ${setup === 'primary' ? 'primary only' : 'one replica'} | ${r.createMs} | ${r.readAfterWriteMs} | ${r.readWithoutWriteMs} |`
    }),
    '',
  )
  return lines.join('\n')
}
