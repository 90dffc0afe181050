/**
 * npm run bench: the service against hand-written baselines on the same database and data,
 * alternating round by round (issue 13). Writes bench/results/latest.json and latest.md.
 *
 *   npm run bench                      PostgreSQL from DATABASE_URL (PGlite when it is unset)
 *   npm run bench -- --db pglite       embedded PGlite
 *   --no-peers                         without PostGraphile and Platformatic DB (the peers run by
 *                                      default on PostgreSQL; the first run installs them:
 *                                      npm ci --prefix bench/peers)
 *   --rounds 12 --duration 2 --warmup 40 (the most; see harness.ts warmUp) --connections 50 --size full|tiny
 *   --scenario get-order (repeatable)  --out <dir>  --note "<text for latest.md>"
 *   --analysis <file>                  Markdown placed in latest.md after the targets
 *                                      (bench/analysis.md when it exists; '' for none)
 *   --report-only                      latest.md again from <out>/latest.json (same --note, --analysis)
 *   --load-generator wrk|autocannon    wrk when installed (apt-get install -y wrk), else autocannon
 *   --profile <dir>                    CPU profiles of each server in <dir>/<server>/ (node --cpu-prof)
 *   --replica                          instead: the read scenarios through one streaming replica beside
 *                                      the primary-only service, on a private primary and replica it
 *                                      starts (bench/replica.ts; needs PostgreSQL 15's binaries, not
 *                                      DATABASE_URL); writes <out>/replica.json and replica.md.
 *                                      --pairs 200: its create-then-read pairs
 *   --scale 20000 --scale 2000000      instead: each read one at a time on databases of that many orders
 *                                      and the rest in proportion, built with SQL (bench/scale.ts); writes
 *                                      <out>/scale.json and scale.md. --keep keeps the databases
 *                                      (bench_scale_<N>) so that the next run skips building them
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { type BenchOptions, type BenchResults, runBench } from './harness.ts'
import { ensurePeersInstalled } from './peer-install.ts'
import { renderReplicaMarkdown, runReplicaBench } from './replica.ts'
import { renderMarkdown } from './report.ts'
import { runScaleBench, writeScaleResults } from './scale.ts'
import type { ScenarioId } from './scenarios.ts'
import { FULL_DATA_SET, TINY_DATA_SET } from './seed.ts'

const SCENARIO_IDS: ScenarioId[] = ['get-order', 'list-orders', 'graphql-user-orders', 'graphql-orders', 'create-order']

const { values } = parseArgs({
  allowNegative: true,
  options: {
    db: { type: 'string' },
    rounds: { type: 'string', default: '12' },
    duration: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '40' },
    connections: { type: 'string', default: '50' },
    size: { type: 'string', default: 'full' },
    scenario: { type: 'string', multiple: true },
    out: { type: 'string', default: 'bench/results' },
    note: { type: 'string' },
    analysis: { type: 'string' },
    profile: { type: 'string' },
    'load-generator': { type: 'string' },
    'report-only': { type: 'boolean', default: false },
    peers: { type: 'boolean', default: true },
    replica: { type: 'boolean', default: false },
    pairs: { type: 'string', default: '200' },
    scale: { type: 'string', multiple: true },
    keep: { type: 'boolean', default: false },
  },
})

function positive(name: string, raw: string | undefined, min: number, whole = true): number {
  const value = Number(raw)
  if (!Number.isFinite(value) || (whole && !Number.isInteger(value)) || value < min) {
    throw new Error(`--${name} must be a ${whole ? 'whole ' : ''}number ≥ ${min}, got "${raw}"`)
  }
  return value
}

const kind = values.db ?? (process.env.DATABASE_URL ? 'postgres' : 'pglite')
if (kind !== 'postgres' && kind !== 'pglite') throw new Error(`--db must be postgres or pglite, got "${kind}"`)
if (kind === 'postgres' && !process.env.DATABASE_URL) throw new Error('--db postgres needs DATABASE_URL (postgres://…)')
if (values.size !== 'full' && values.size !== 'tiny') throw new Error(`--size must be full or tiny, got "${values.size}"`)
const unknown = (values.scenario ?? []).filter((id) => !SCENARIO_IDS.some((known) => known === id))
if (unknown.length) throw new Error(`unknown --scenario ${unknown.join(', ')}; known: ${SCENARIO_IDS.join(', ')}`)
const loadGenerator = values['load-generator']
if (loadGenerator !== undefined && loadGenerator !== 'wrk' && loadGenerator !== 'autocannon') {
  throw new Error(`--load-generator must be wrk or autocannon, got "${loadGenerator}"`)
}

const options: BenchOptions = {
  database: kind === 'postgres' ? { kind, url: process.env.DATABASE_URL ?? '' } : { kind },
  size: values.size === 'full' ? FULL_DATA_SET : TINY_DATA_SET,
  rounds: positive('rounds', values.rounds, 1),
  durationSeconds: positive('duration', values.duration, 0.1, false),
  warmupSeconds: positive('warmup', values.warmup, 0, false),
  connections: positive('connections', values.connections, 1),
  scenarios: values.scenario ? SCENARIO_IDS.filter((id) => values.scenario?.includes(id)) : undefined,
  log: (line) => console.log(line),
  profileDir: values.profile ? path.resolve(values.profile) : undefined,
  peers: values.peers,
  loadGenerator,
}

// Where the time goes and what was tried for missed targets, kept by hand next to the harness;
// read before the run, so that a wrong path fails at once rather than after it.
const DEFAULT_ANALYSIS = 'bench/analysis.md'
const analysisFile = values.analysis ?? (existsSync(DEFAULT_ANALYSIS) ? DEFAULT_ANALYSIS : '')
const analysis = analysisFile ? await readFile(analysisFile, 'utf8') : undefined
const jsonFile = path.join(values.out, 'latest.json')
const markdownFile = path.join(values.out, 'latest.md')

if (values.scale) {
  if (kind !== 'postgres') throw new Error('--scale needs PostgreSQL: set DATABASE_URL (postgres://…)')
  const sizes = values.scale.map((raw) => positive('scale', raw, 1000))
  const results = await runScaleBench({
    url: process.env.DATABASE_URL ?? '',
    sizes,
    keep: values.keep,
    out: values.out,
    log: (line) => console.log(line),
  })
  await writeScaleResults(results, values.out, values.note)
  console.log(`wrote ${path.join(values.out, 'scale.json')} and scale.md`)
} else if (values.replica) {
  const results = await runReplicaBench({
    size: values.size === 'full' ? FULL_DATA_SET : TINY_DATA_SET,
    rounds: options.rounds,
    durationSeconds: options.durationSeconds,
    warmupSeconds: options.warmupSeconds,
    connections: options.connections,
    pairs: positive('pairs', values.pairs, 20),
    log: (line) => console.log(line),
  })
  await mkdir(values.out, { recursive: true })
  await writeFile(path.join(values.out, 'replica.json'), `${JSON.stringify(results, null, 2)}\n`)
  await writeFile(path.join(values.out, 'replica.md'), renderReplicaMarkdown(results))
  console.log(`wrote ${path.join(values.out, 'replica.json')} and replica.md`)
} else if (values['report-only']) {
  // latest.md again from the run already in latest.json (after the analysis or the note changed).
  // The file is one this program wrote from a BenchResults.
  const results: BenchResults = JSON.parse(await readFile(jsonFile, 'utf8'))
  await writeFile(markdownFile, renderMarkdown(results, values.note, analysis))
  console.log(`wrote ${markdownFile} from ${jsonFile}`)
} else {
  // The peers need PostgreSQL; on PGlite the harness says they were not run.
  if (options.peers && kind === 'postgres') ensurePeersInstalled((line) => console.log(line))
  const results = await runBench(options)
  await mkdir(values.out, { recursive: true })
  await writeFile(jsonFile, `${JSON.stringify(results, null, 2)}\n`)
  await writeFile(markdownFile, renderMarkdown(results, values.note, analysis))
  console.log(`wrote ${jsonFile} and latest.md`)
  if (results.failure) {
    console.error(`bench failed: ${results.failure}`)
    process.exitCode = 1
  }
}
