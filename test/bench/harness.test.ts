/**
 * The bench harness runs end to end on a tiny data set (PostgreSQL when DATABASE_URL is set, else
 * PGlite) and produces well-formed results for every scenario, the service and every baseline:
 * each baseline answers the same data as the service, and every number the report needs is there.
 * No timing is asserted: this proves the harness works, not how fast anything is.
 */
import t from 'tap'
import { type BenchResults, runBench } from '../../bench/harness.ts'
import { renderMarkdown } from '../../bench/report.ts'
import { TINY_DATA_SET } from '../../bench/seed.ts'
import { postgresUrl } from '../setup/templates.ts'

// Seeding, four servers and five scenarios: minutes when other test files share the two cores.
t.setTimeout(300_000)

const SCENARIOS = {
  'get-order': ['service', 'fastify'],
  'list-orders': ['service', 'fastify'],
  'graphql-user-orders': ['service', 'apollo', 'mercurius'],
  'graphql-orders': ['service', 'apollo', 'mercurius'],
  'create-order': ['service', 'fastify'],
}

t.test('npm run bench runs every scenario on the service and its baselines and reports each', async (t) => {
  const url = postgresUrl()
  const results: BenchResults = await runBench({
    database: url ? { kind: 'postgres', url } : { kind: 'pglite' },
    size: TINY_DATA_SET,
    rounds: 1,
    durationSeconds: 0.5,
    warmupSeconds: 0,
    connections: 2,
    // Four servers start at once beside two other test files on a 2-core machine.
    startTimeoutMs: 180_000,
  })
  const onPostgres = url !== undefined
  t.equal(results.database, onPostgres ? 'postgres' : 'pglite')
  // The test suite never installs or runs the peers (npm run bench does).
  t.match(results.peers, /^not run/)
  // The machine's own steadiness, before and after the rounds: a reading, whatever its value.
  for (const steadiness of [results.machineSteadiness?.beforeRounds, results.machineSteadiness?.afterRounds]) {
    t.ok(steadiness && steadiness.windows > 0 && steadiness.cores > 0, 'machine steadiness measured')
    t.ok(steadiness && steadiness.lowest <= 1 && steadiness.highest >= 1, 'slowest and fastest window around the median')
  }
  t.same(
    results.scenarios.map((scenario) => scenario.id),
    Object.keys(SCENARIOS),
  )
  for (const scenario of results.scenarios) {
    t.same(
      scenario.servers.map((server) => server.server),
      SCENARIOS[scenario.id],
      `${scenario.id}: the service and its baselines`,
    )
    for (const server of scenario.servers) {
      const what = `${scenario.id} on ${server.server}`
      t.ok(server.matchesService, `${what}: answers the same data as the service (${server.mismatch ?? ''})`)
      t.ok(server.bodyBytes > 0, `${what}: body bytes`)
      t.equal(server.rounds.length, 1, `${what}: one round`)
      const [round] = server.rounds
      t.ok(round!.requests > 0, `${what}: answered requests`)
      t.ok(round!.rejected === null || typeof round!.rejected === 'string', `${what}: rejection recorded`)
      t.type(round!.serverCpuMsPerRequest, 'number', `${what}: server CPU per request`)
      // Statements are counted in a pass of their own (through a proxy), never in a measured round.
      for (const value of [round!.postgresCpuMsPerRequest, server.statementsPerRequest]) {
        if (onPostgres) t.type(value, 'number', `${what}: PostgreSQL CPU and statements per request`)
        else t.equal(value, null, `${what}: no PostgreSQL CPU or statement count on PGlite`)
      }
    }
    t.same(
      scenario.comparisons.map((comparison) => comparison.baseline),
      SCENARIOS[scenario.id].slice(1),
      `${scenario.id}: a comparison with each baseline`,
    )
    const fixedRate = scenario.id === 'get-order' || scenario.id === 'graphql-user-orders'
    for (const comparison of scenario.comparisons) {
      if (fixedRate && comparison.fixedRate === null) {
        // Only when the baseline's round was rejected: then there is no maximum to halve.
        t.ok(
          scenario.servers.some((server) => server.server === comparison.baseline && server.acceptedRounds === 0),
          'fixed rate skipped only without a maximum',
        )
      } else if (fixedRate) {
        t.ok(comparison.fixedRate!.rate >= 1, `${scenario.id}: fixed rate against ${comparison.baseline}`)
        t.equal(comparison.fixedRate!.service.length, 1)
        t.equal(comparison.fixedRate!.baseline.length, 1)
      } else t.equal(comparison.fixedRate, null)
    }
  }
  const markdown = renderMarkdown(results)
  t.match(markdown, /## Targets\n/)
  t.match(markdown, /## Cost per request\n/)
  for (const id of Object.keys(SCENARIOS)) t.match(markdown, new RegExp(`### ${id}: `), `the report has ${id}`)
  // The hand-kept analysis of missed targets (bench/analysis.md) goes right after the targets.
  const analysed = renderMarkdown(results, undefined, '## Missed targets: where the time goes\n\nThe profile says…\n')
  t.ok(
    analysed.indexOf('## Cost per request') < analysed.indexOf('## Missed targets') &&
      analysed.indexOf('## Missed targets') < analysed.indexOf('## Per scenario'),
    'the analysis sits between the targets and the scenarios',
  )
})
