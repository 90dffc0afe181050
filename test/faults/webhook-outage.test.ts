/**
 * A database outage delays webhooks and loses none (decisions §13, "survives database outages"):
 * with deliveries pending, the PostgreSQL server of this test's own is stopped, the worker's
 * statements fail (logged, never a crash), and once the server is back every event reaches the
 * receiver.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { createDatabase } from '../../src/db/database.ts'
import { bearer, build } from '../helper.ts'
import { answer, startReceiver } from '../modules/webhooks/receiver.ts'
import { postgresUrl } from '../setup/templates.ts'
import { privateClusterUnavailable, startPrivateCluster } from './private-cluster.ts'

const SKIP = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set); it starts a cluster of its own'
  : process.env.CI
    ? false
    : (privateClusterUnavailable() ?? false)

t.test('pending webhook deliveries survive a database outage', { skip: SKIP }, async (t) => {
  const cluster = await startPrivateCluster(t)
  const database = await createDatabase({ url: await cluster.cloneDatabase(), poolSize: 5, logger: { warn: () => {} } })
  t.teardown(() => database.close())
  const app = await build(t, {
    database,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL: '50ms', WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_TIMEOUT: '2s' },
  })
  const receiver = await startReceiver(t, answer(500))
  const created = await app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(2), payload: { url: receiver.url } })
  t.equal(created.statusCode, 201)
  const titles = ['one', 'two', 'three']
  for (const title of titles) {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/articles',
      headers: bearer(3, 'articles:write'),
      payload: { title, body: '.' },
    })
    t.equal(response.statusCode, 201)
  }
  await receiver.waitFor(2)

  await cluster.stop('fast')
  receiver.setBehaviour(answer(200))
  const answered200From = receiver.received.length
  // The worker keeps waking up against a stopped server for a while.
  await sleep(1500)
  await cluster.start()

  const deadline = Date.now() + 30_000
  const acknowledged = () => receiver.received.slice(answered200From).map((entry) => JSON.parse(entry.body).data.title as string)
  const delivered = () => new Set(acknowledged())
  while (!titles.every((title) => delivered().has(title))) {
    if (Date.now() > deadline) throw new Error(`after the outage only ${[...delivered()].join(', ')} arrived`)
    await sleep(50)
  }
  t.same([...delivered()], titles, 'every event arrived after the outage, in seq order')
})
