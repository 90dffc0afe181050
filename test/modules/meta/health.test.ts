import t from 'tap'
import { bearer, build, reachableRedis } from '../../helper.ts'

t.test('/healthz answers while the process is alive, without a credential', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/healthz' })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { status: 'ok' })
})

t.test('/readyz is 200 while the database answers and 503 problem+json once it does not', async (t) => {
  const app = await build(t)
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 200)
  t.equal(ready.json().status, 'ready')

  await app.database.close()
  const down = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(down.statusCode, 503)
  t.match(down.headers['content-type'], /^application\/problem\+json/)
  t.equal(down.json().code, 'SERVICE_UNAVAILABLE')
  t.notMatch(down.body, /stack|select 1/i, 'no internals leak')
})

t.test('draining (SIGTERM, SHUTDOWN_DRAIN): /readyz is 503 while requests are still served, each closing its connection', async (t) => {
  const app = await build(t)
  const before = await app.inject({ method: 'GET', url: '/healthz' })
  t.not(before.headers.connection, 'close', 'connections are kept alive before')
  app.startDraining()
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 503)
  t.match(ready.headers['content-type'], /^application\/problem\+json/)
  t.equal(ready.json().code, 'SERVICE_UNAVAILABLE')
  t.equal(ready.headers['retry-after'], '1')
  const served = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(2, 'orders:read') })
  t.equal(served.statusCode, 200, 'a request that still arrives is served')
  t.equal(served.headers.connection, 'close', 'and closes its connection, so the next goes to another instance')
})

t.test('health probes are never counted nor refused by the rate limit', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '3' } })
  for (let probe = 0; probe < 10; probe++) {
    for (const url of ['/healthz', '/readyz']) {
      const response = await app.inject({ method: 'GET', url })
      t.equal(response.statusCode, 200, `${url} probe ${probe + 1} from one IP`)
      t.equal(response.headers.ratelimit, undefined, `${url} is outside every budget`)
    }
  }
  // The same IP still has its whole budget for the API: the probes took none of it.
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await app.inject({ method: 'GET', url: '/api/v1/orders' })).statusCode)
  t.same(statuses, [401, 401, 401, 429])
})

t.test('/readyz says nothing about Redis when none is configured', async (t) => {
  const app = await build(t)
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 200)
  t.equal(ready.json().database, app.database.kind)
  t.notOk('redis' in ready.json())
})

t.test('/readyz reports a reachable Redis as ok', async (t) => {
  const redisUrl = await reachableRedis(t)
  if (!redisUrl) return
  const app = await build(t, { env: { REDIS_URL: redisUrl } })
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(ready.statusCode, 200)
  t.equal(ready.json().redis, 'ok')
})
