/**
 * Request metrics are one observation per request, folded into their series at scrape time or once
 * a series holds 512 unfolded requests (plugins/metrics.ts): either way every request is counted
 * once, with its duration, statements and database time.
 */
import t from 'tap'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { build } from '../helper.ts'

async function scrapeSamples(app: Awaited<ReturnType<typeof build>>): Promise<Map<string, number>> {
  const response = await app.inject({ method: 'GET', url: '/metrics' })
  if (response.statusCode !== 200) throw new Error(`GET /metrics answered ${response.statusCode}`)
  // Histogram TYPE lines left out: the parser folds a histogram's label sets into one.
  const families = parsePrometheusTextFormat(
    response.body
      .split('\n')
      .filter((line) => !(line.startsWith('# TYPE ') && line.endsWith(' histogram')))
      .join('\n'),
  )
  const samples = new Map<string, number>()
  for (const family of families)
    for (const metric of family.metrics)
      if (metric.labels?.route === '/healthz')
        samples.set(`${family.name}${metric.labels.le === undefined ? '' : ` le=${metric.labels.le}`}`, Number(metric.value))
  return samples
}

t.test('every request is counted once in each series, whether folded at a scrape or past the bound', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const requests = 1300
  for (let sent = 0; sent < requests; sent++) await app.inject({ method: 'GET', url: '/healthz' })
  const first = await scrapeSamples(app)
  t.equal(first.get('http_requests_total'), requests, 'counted')
  t.equal(first.get('http_request_duration_seconds_count'), requests, 'each duration observed')
  t.equal(first.get('http_request_duration_seconds_bucket le=+Inf'), requests, 'in buckets')
  t.equal(first.get('db_statements_per_request_count'), requests, 'each statement count observed')
  t.equal(first.get('db_time_per_request_seconds_count'), requests, 'each database time observed')
  t.equal(first.get('db_statements_per_request_sum'), 0, '/healthz runs no statement')

  await app.inject({ method: 'GET', url: '/healthz' })
  const second = await scrapeSamples(app)
  t.equal(second.get('http_requests_total'), requests + 1, 'a second scrape adds only what came since')
  t.equal(second.get('http_request_duration_seconds_count'), requests + 1)
})
