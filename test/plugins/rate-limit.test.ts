import t from 'tap'
import { randomBytes } from 'node:crypto'
import { bearer, build, createTestDatabase, gql, reachableRedis } from '../helper.ts'

t.test('the 601st request in a window is 429 with Retry-After and a quota-exceeded problem', async (t) => {
  const app = await build(t)
  const headers = bearer(2, 'orders:read')
  let last: Awaited<ReturnType<typeof app.inject>> | undefined
  for (let i = 1; i <= 600; i++) {
    last = await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers })
    if (last.statusCode !== 200) break
  }
  t.equal(last!.statusCode, 200, 'the first 600 pass')
  t.equal(last!.headers['ratelimit-limit'], undefined, 'no legacy fields unless RATE_LIMIT_LEGACY_HEADERS=true')
  t.equal(last!.headers['ratelimit-remaining'], undefined, 'no legacy fields unless RATE_LIMIT_LEGACY_HEADERS=true')
  t.equal(last!.headers['ratelimit-policy'], '"default";q=600;w=60')
  t.match(last!.headers.ratelimit, /^"default";r=0;t=\d+$/)

  const limited = await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers })
  t.equal(limited.statusCode, 429)
  t.match(limited.headers['content-type'], /^application\/problem\+json/)
  t.match(limited.headers['retry-after'], /^\d+$/)
  t.match(limited.json(), { status: 429, code: 'RATE_LIMITED', type: '/problems/quota-exceeded' })

  const other = await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: bearer(3, 'orders:read') })
  t.equal(other.statusCode, 200, 'budgets are per caller')
  t.match(other.headers.ratelimit, /^"default";r=599;t=\d+$/)
})

t.test('RATE_LIMIT_LEGACY_HEADERS=true adds RateLimit-Limit/-Remaining/-Reset beside the draft fields', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_LEGACY_HEADERS: 'true', RATE_LIMIT_MAX: '5' } })
  const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: bearer(2, 'orders:read') })
  t.equal(response.headers['ratelimit-limit'], '5')
  t.equal(response.headers['ratelimit-remaining'], '4')
  t.match(response.headers['ratelimit-reset'], /^\d+$/)
  t.equal(response.headers['ratelimit-policy'], '"default";q=5;w=60')
  t.match(response.headers.ratelimit, /^"default";r=4;t=\d+$/)
})

t.test('without a valid token the budget is per IP', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '3' } })
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await app.inject({ method: 'GET', url: '/api/v1/orders' })).statusCode)
  t.same(statuses, [401, 401, 401, 429])
})

t.test('unknown routes are rate limited like any other: a 404 is counted and reports the budget', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '3' } })
  const headers = bearer(2, 'orders:read')
  const answers = []
  for (const url of ['/api/v1/invoices', '/nope', '/api/v1/orders/', '/api/v1/invoices']) {
    answers.push(await app.inject({ method: 'GET', url, headers }))
  }
  t.same(
    answers.map((answer) => answer.statusCode),
    [404, 404, 404, 429],
  )
  t.same(
    answers.map((answer) => answer.headers.ratelimit),
    ['"default";r=2;t=60', '"default";r=1;t=60', '"default";r=0;t=60', '"default";r=0;t=60'],
    'every 404 carries the RateLimit fields',
  )
  t.equal(answers[3]!.json().code, 'RATE_LIMITED')
  // The budget is the caller's, whatever the route: a known one is refused now too.
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders', headers })).statusCode, 429)
  t.equal((await app.inject({ method: 'GET', url: '/healthz', headers })).statusCode, 200, 'the probes are still never limited')
})

t.test('refusals before the handler are counted too: a 406 and a GraphQL 401 carry the budget', async (t) => {
  const app = await build(t, { env: { RATE_LIMIT_MAX: '5' } })
  const versioned = await app.inject({
    method: 'GET',
    url: '/api/v1/openapi.json',
    headers: { accept: 'application/vnd.api+json; version=2' },
  })
  t.equal(versioned.statusCode, 406)
  t.match(versioned.headers.ratelimit, /^"default";r=4;t=\d+$/)
  const graphql = await gql(app, '{ __typename }')
  t.equal(graphql.statusCode, 401)
  t.match(graphql.headers.ratelimit, /^"default";r=3;t=\d+$/, 'the same IP budget')
})

t.test('two instances sharing Redis share one budget', async (t) => {
  const redisUrl = await reachableRedis(t)
  if (!redisUrl) return
  // A subject of its own, so parallel runs against the same Redis never share a counter.
  const subject = 100_000 + randomBytes(2).readUInt16BE(0)
  const env = { REDIS_URL: redisUrl, RATE_LIMIT_MAX: '10' }
  const database = await createTestDatabase(t)
  const a = await build(t, { env, database })
  const b = await build(t, { env, database })
  const headers = bearer(`${subject}${process.pid % 1000}`, 'orders:read')
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) {
    const app = i % 2 === 0 ? a : b
    statuses.push((await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers })).statusCode)
  }
  t.same(statuses.slice(0, 10), Array(10).fill(200), 'ten requests across both instances pass')
  t.same(statuses.slice(10), [429, 429], 'the eleventh and twelfth are refused by either instance')
})
