import t from 'tap'
import { build } from '../../helper.ts'

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
