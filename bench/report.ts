/**
 * bench/results/latest.md: the targets of issues 25 and 13, each marked met or not, the servers
 * side by side, and each scenario's table.
 */
import type { BenchResults, ScenarioResult, ServerSummary } from './harness.ts'
import { BASELINE_TITLES, type BaselineName, isPeer, type ServerName } from './scenarios.ts'

const SERVER_TITLES: Record<ServerName, string> = { service: 'this service', ...BASELINE_TITLES }

const show = (value: number | null, digits = 2): string => (value === null ? 'n/a' : value.toFixed(digits))
const times = (value: number | null): string => (value === null ? 'n/a' : `${value.toFixed(2)}×`)

interface TargetRow {
  scenario: string
  target: string
  measured: string
  met: boolean | null
}

function verdict(met: boolean | null): string {
  return met === null ? 'not measured' : met ? 'met' : '**not met**'
}

/** "req/s ≥ ratio × baseline", saying where the baseline (a peer) does less work than the scenario. */
function throughputTarget(scenario: ScenarioResult, baseline: BaselineName, ratio: number, aim = ''): TargetRow {
  const measured = scenario.comparisons.find((entry) => entry.baseline === baseline)?.requestsPerSecondRatio ?? null
  const lessWork = scenario.servers.find((server) => server.server === baseline)?.lessWork
  return {
    scenario: scenario.id,
    target: `req/s ≥ ${ratio.toFixed(2)}× ${BASELINE_TITLES[baseline]}${aim}`,
    measured: `${times(measured)}${lessWork ? ` (${BASELINE_TITLES[baseline]} does less work: ${lessWork.what})` : ''}`,
    met: measured === null ? null : measured >= ratio,
  }
}

/** p99 at half a server's maximum rate ≤ 1.5× its p99, for each comparison measured at a fixed rate. */
function fixedRateTargets(scenario: ScenarioResult, include: (baseline: BaselineName) => boolean): TargetRow[] {
  return scenario.comparisons.flatMap((entry) =>
    entry.fixedRate && include(entry.baseline)
      ? [
          {
            scenario: scenario.id,
            target: `p99 at ${entry.fixedRate.rate} req/s (half of ${BASELINE_TITLES[entry.baseline]}'s maximum) ≤ 1.5× its p99`,
            measured: `${show(entry.fixedRate.serviceP99Ms, 0)} ms vs ${show(entry.fixedRate.baselineP99Ms, 0)} ms: ${times(entry.fixedRate.p99Ratio)}`,
            met: entry.fixedRate.p99Ratio === null ? null : entry.fixedRate.p99Ratio <= 1.5,
          },
        ]
      : [],
  )
}

/** Issue 25: against what a team would pick instead (the peers, and the baselines). */
function issue25TargetsOf(scenario: ScenarioResult): TargetRow[] {
  const rows: TargetRow[] = []
  if (scenario.id === 'graphql-user-orders' || scenario.id === 'graphql-orders') {
    rows.push(throughputTarget(scenario, 'postgraphile', 1), throughputTarget(scenario, 'mercurius', 1))
    rows.push(throughputTarget(scenario, 'apollo', 2))
  }
  if (scenario.id === 'get-order' || scenario.id === 'list-orders') {
    rows.push(throughputTarget(scenario, 'platformatic', 1))
    rows.push(throughputTarget(scenario, 'fastify', 0.6, ' (the near limit; 0.90× is where we want to end)'))
  }
  if (scenario.id === 'create-order') rows.push(throughputTarget(scenario, 'fastify', 0.8, ' (the bare insert)'))
  return [...rows, ...fixedRateTargets(scenario, () => true)]
}

/** Issue 13: against the hand-written baselines, with server CPU and statement budgets. */
function issue13TargetsOf(scenario: ScenarioResult): TargetRow[] {
  const rows: TargetRow[] = []
  const comparison = (baseline: BaselineName) => scenario.comparisons.find((entry) => entry.baseline === baseline)
  const atLeast = (baseline: BaselineName, ratio: number) => rows.push(throughputTarget(scenario, baseline, ratio))
  if (scenario.id === 'get-order' || scenario.id === 'list-orders') {
    atLeast('fastify', 0.9)
    const cpu = comparison('fastify')?.serverCpuRatio ?? null
    rows.push({
      scenario: scenario.id,
      target: 'server CPU per request ≤ 1.5× bare Fastify + pg',
      measured: times(cpu),
      met: cpu === null ? null : cpu <= 1.5,
    })
  }
  if (scenario.id === 'create-order') atLeast('fastify', 0.8)
  if (scenario.id === 'graphql-user-orders' || scenario.id === 'graphql-orders') {
    atLeast('apollo', 2)
    atLeast('mercurius', 1)
  }
  const service = scenario.servers.find((server) => server.server === 'service')
  if (scenario.statementBudget && service) {
    const { max, reason } = scenario.statementBudget
    const measured = service.statementsPerRequest
    rows.push({
      scenario: scenario.id,
      target: `SQL statements per request ≤ ${show(max)} (${reason})`,
      measured: show(measured),
      met: measured === null || max === null ? null : measured <= max + 0.05,
    })
  }
  return [...rows, ...fixedRateTargets(scenario, (baseline) => !isPeer(baseline))]
}

/** The columns of the side-by-side table, in the issue's order. */
const SIDE_BY_SIDE: BaselineName[] = ['fastify', 'platformatic', 'mercurius', 'postgraphile', 'apollo']

/** One line per scenario: the service's req/s, then each server's req/s and service ÷ server. */
function sideBySide(results: BenchResults): string[] {
  const columns = SIDE_BY_SIDE.filter((name) => results.scenarios.some((scenario) => scenario.servers.some((s) => s.server === name)))
  const lines = [
    'Median req/s of each server; in brackets, the service ÷ that server (medians of paired rounds).',
    '',
    `| Scenario | ${SERVER_TITLES.service} | ${columns.map((name) => BASELINE_TITLES[name]).join(' | ')} |`,
    `|---|---|${columns.map(() => '---|').join('')}`,
  ]
  const lessWork: string[] = []
  for (const scenario of results.scenarios) {
    const server = (name: ServerName) => scenario.servers.find((summary) => summary.server === name)
    const cells = columns.map((name) => {
      const summary = server(name)
      if (!summary) return ''
      const ratio = scenario.comparisons.find((entry) => entry.baseline === name)?.requestsPerSecondRatio ?? null
      if (summary.lessWork) lessWork.push(`${scenario.id}, ${BASELINE_TITLES[name]}: ${summary.lessWork.what}; ${summary.lessWork.why}.`)
      return `${show(summary.requestsPerSecond, 0)} (${times(ratio)}${summary.lessWork ? `, ${summary.lessWork.what}` : ''})`
    })
    lines.push(`| ${scenario.id} | ${show(server('service')?.requestsPerSecond ?? null, 0)} | ${cells.join(' | ')} |`)
  }
  if (lessWork.length) lines.push('', 'Where a peer does less work than the scenario asks (its generated API cannot express it):', '')
  for (const line of lessWork) lines.push(`- ${line}`)
  return lines
}

function serverRow(scenario: ScenarioResult, server: ServerSummary): string {
  const comparisons = scenario.comparisons.map((entry) => `${entry.baseline} ${times(entry.requestsPerSecondRatio)}`).join(', ')
  const title = SERVER_TITLES[server.server]
  return [
    server.server === 'service' ? `**${title}**` : server.lessWork ? `${title} (does less work: ${server.lessWork.what})` : title,
    show(server.requestsPerSecond, 0),
    server.server === 'service' ? comparisons : '',
    show(server.latencyMs.p50, 1),
    show(server.latencyMs.p99, 1),
    show(server.serverCpuMsPerRequest, 3),
    show(server.postgresCpuMsPerRequest, 3),
    show(server.statementsPerRequest),
    String(server.bodyBytes),
    `${server.acceptedRounds}/${server.acceptedRounds + server.rejectedRounds}${server.matchesService ? '' : ' (data differs!)'}`,
  ].join(' | ')
}

/**
 * `analysis`: Markdown that says, for the targets a run misses, where the time goes (profiles) and
 * what was tried, measured (bench/analysis.md, kept by hand); placed after the targets table.
 */
export function renderMarkdown(results: BenchResults, note?: string, analysis?: string): string {
  const lines: string[] = []
  // The baselines run on whichever database the service does.
  const onDatabase = (text: string) => (results.database === 'pglite' ? text.replaceAll('+ pg', '+ PGlite') : text)
  lines.push('# Bench results', '')
  lines.push(
    `Measured ${results.measuredAt} on ${results.database === 'postgres' ? 'PostgreSQL' : 'PGlite'}, Node ${results.machine.node}, ${results.machine.cpus} CPUs, load average at start ${results.machine.loadAverageAtStart.join(' / ')}.`,
  )
  if (note) lines.push('', note)
  lines.push(
    '',
    `Data set: ${results.dataSet.companies} companies, ${results.dataSet.users} users, ${results.dataSet.orders} orders of ${results.dataSet.itemsPerOrder} items. ${results.databaseSetup}`,
    '',
    `Service environment for the run: ${Object.entries(results.serviceEnvironment)
      .map(([key, value]) => `\`${key}=${value}\``)
      .join(
        ', ',
      )} (logging at warn, rate and GraphQL cost limits raised so the load never hits them; validation, ETags and idempotency stay on).`,
    '',
  )
  // Results from before the peers have no line about them.
  if (results.peers) lines.push(`Peers: ${results.peers}.`, '')
  if (results.failure) lines.push(`**The run failed: ${results.failure}.**`, '')
  const targetTable = (title: string, targetsOf: (scenario: ScenarioResult) => TargetRow[]) => {
    lines.push(title, '', '| Scenario | Target | Measured | |', '|---|---|---|---|')
    for (const scenario of results.scenarios) {
      for (const row of targetsOf(scenario))
        lines.push(onDatabase(`| ${row.scenario} | ${row.target} | ${row.measured} | ${verdict(row.met)} |`))
    }
  }
  targetTable('## Targets (issue 25)', issue25TargetsOf)
  lines.push('', '## Side by side', '', ...sideBySide(results).map(onDatabase), '')
  targetTable('## Targets (issue 13)', issue13TargetsOf)
  lines.push(
    '',
    "Statement targets allow 0.05 above the budget: the service's background work (its event relay and housekeeping) sends a few statements a second whatever the load, and they land in every round.",
  )
  if (analysis) lines.push('', analysis.trim())
  lines.push('', '## Per scenario', '')
  for (const scenario of results.scenarios) {
    lines.push(`### ${scenario.id}: ${scenario.title}`, '')
    lines.push(
      '| Server | req/s | service ÷ baseline | p50 ms | p99 ms | server CPU ms/req | PostgreSQL CPU ms/req | SQL statements/req | body bytes | rounds accepted |',
      '|---|---|---|---|---|---|---|---|---|---|',
    )
    for (const server of scenario.servers) lines.push(onDatabase(`| ${serverRow(scenario, server)} |`))
    const rejected = scenario.servers.flatMap((server) =>
      server.rounds.filter((round) => round.rejected).map((round) => `${server.server} round ${round.round}: ${round.rejected}`),
    )
    if (rejected.length) lines.push('', `Rejected rounds: ${rejected.join('; ')}.`)
    lines.push('')
  }
  lines.push('## How it was measured', '', ...results.method.map((line) => `- ${line}`), '')
  return lines.join('\n')
}
