/**
 * Housekeeping (pruning delivered events and expired idempotency outcomes, once a minute: plugins/
 * events.ts) is a trace of its own with its statements under it. Its own file:
 * it waits for the first pass, a minute after the app starts.
 */
import t from 'tap'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base'
import { buildApp } from '../../src/app.ts'
import { createTestDatabase, testConfig } from '../helper.ts'

/** The first pass comes 60 ticks of one second after start; a loaded machine delays timers. */
const WAIT_MS = 110_000
t.setTimeout(WAIT_MS + 60_000)

t.test('a housekeeping pass is a root span with its DELETE statements under it', async (t) => {
  const exporter = new InMemorySpanExporter()
  const app = await buildApp({ config: testConfig(), database: await createTestDatabase(t), spanExporter: exporter })
  t.teardown(() => app.close())
  const deadline = Date.now() + WAIT_MS
  let pass = exporter.getFinishedSpans().find((span) => span.name === 'events.housekeeping')
  while (!pass && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    pass = exporter.getFinishedSpans().find((span) => span.name === 'events.housekeeping')
  }
  if (!pass) throw new Error(`no housekeeping span within ${WAIT_MS} ms`)
  t.equal(pass.parentSpanContext, undefined, 'a root span')
  t.equal(typeof pass.attributes['events.deleted'], 'number', 'saying how many delivered events it deleted')
  t.equal(typeof pass.attributes['idempotency.outcomes_deleted'], 'number', 'and how many expired outcomes')
  const statements = exporter
    .getFinishedSpans()
    .filter((span) => span.parentSpanContext?.spanId === pass.spanContext().spanId)
    .map((span) => String(span.attributes['db.query.text']))
  t.ok(
    statements.some((sql) => /delete from "?outbox"?\b/.test(sql)),
    `its statements are under it: ${statements.join(' | ')}`,
  )
  t.ok(statements.some((sql) => /^delete from "idempotency_keys"/.test(sql)))
})
