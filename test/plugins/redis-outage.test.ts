/**
 * Redis is an optimisation, not a dependency (decisions §12). Each test runs a redis-server of its
 * own on a free port, kills it (SIGKILL, like a crash) and starts it again on the same port: the
 * machine's shared Redis is never touched.
 */
import t from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import type { Response } from 'light-my-request'
import { bearer, build, gql } from '../helper.ts'
import { captureLog } from '../log-capture.ts'

const redisServer = spawnSync('which', ['redis-server'], { encoding: 'utf8' }).stdout.trim()
// In CI a missing redis-server is a failure, like a missing shared Redis (test/helper.ts).
if (!redisServer && process.env.CI) throw new Error('redis-server is not installed; CI must install it')
const skip = redisServer ? false : 'redis-server is not installed: install it to run this test'
const RATE_LIMIT_FIELDS = ['ratelimit-policy', 'ratelimit']

async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  await once(server, 'close')
  if (address === null || typeof address === 'string') throw new Error('no TCP port')
  return address.port
}

async function answersPing(port: number): Promise<boolean> {
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  try {
    await probe.connect()
    return (await probe.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null
}

async function kill(child: ChildProcess): Promise<void> {
  if (!running(child)) return
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
}

/** A redis-server without persistence on `port`, killed when the test ends whatever happens. */
async function startRedis(t: { teardown(fn: () => unknown): void }, port: number): Promise<ChildProcess> {
  const child = spawn(redisServer, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  t.teardown(() => kill(child))
  await eventually(() => answersPing(port), 10_000, `redis-server on port ${port} to answer`)
  return child
}

/** Polls `check` until it holds, for at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting ${ms} ms for ${what}`)
    await sleep(100)
  }
}

function rateLimitFields(response: Response): string[] {
  return RATE_LIMIT_FIELDS.filter((name) => response.headers[name] !== undefined)
}

const caller = bearer(2, 'orders:read articles:write')
const articlesQuery = '{ articles(first: 5) { id title } }'

function requests(app: FastifyInstance) {
  const timed = async (send: () => Promise<Response>) => {
    const started = performance.now()
    const response = await send()
    return { response, ms: performance.now() - started }
  }
  return {
    getOrders: () => timed(() => app.inject({ method: 'GET', url: '/api/v1/orders', headers: caller })),
    postArticle: () =>
      timed(() =>
        app.inject({ method: 'POST', url: '/api/v1/articles', headers: caller, payload: { title: 'Outage', body: 'Still writing' } }),
      ),
    graphql: () => timed(() => gql(app, { query: articlesQuery }, caller)),
    healthz: () => app.inject({ method: 'GET', url: '/healthz' }),
    readyz: () => app.inject({ method: 'GET', url: '/readyz' }),
  }
}

t.test(
  'with Redis gone, requests fail open without RateLimit fields, probes stay 200, and everything recovers by itself',
  { skip },
  async (t) => {
    const port = await freePort()
    const first = await startRedis(t, port)
    const log = captureLog()
    let statements = 0
    // No outbox relay: its polling would count as statements.
    const app = await build(t, {
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, EVENTS_RELAY: 'false', LOG_LEVEL: 'warn' },
      onQuery: () => void statements++,
      loggerStream: log.stream,
    })
    const send = requests(app)
    const database = app.database.kind

    // Redis up: budgets are reported, and the GraphQL cache serves a repeated read.
    const latencies = (): Record<string, number[]> => ({ 'REST GET': [], 'REST POST': [], 'GraphQL query': [] })
    const upLatencies = latencies()
    let upQuery!: Response
    for (let round = 0; round < 5; round++) {
      const get = await send.getOrders()
      t.equal(get.response.statusCode, 200)
      t.same(rateLimitFields(get.response), RATE_LIMIT_FIELDS, 'a REST read reports its budget')
      upLatencies['REST GET']!.push(get.ms)
      const post = await send.postArticle()
      t.equal(post.response.statusCode, 201)
      t.same(rateLimitFields(post.response), RATE_LIMIT_FIELDS, 'a REST write reports its budget')
      upLatencies['REST POST']!.push(post.ms)
      const query = await send.graphql()
      t.equal(query.response.statusCode, 200)
      t.equal(query.response.json().errors, undefined)
      t.ok(query.response.json().extensions?.cost, 'GraphQL reports its points')
      t.same(rateLimitFields(query.response), RATE_LIMIT_FIELDS)
      upLatencies['GraphQL query']!.push(query.ms)
      upQuery = query.response
    }
    statements = 0
    t.same((await send.graphql()).response.json().data, upQuery.json().data)
    t.equal(statements, 0, 'the repeated read is served from the Redis cache')
    t.match((await send.readyz()).json(), { status: 'ready', database, redis: 'ok' })

    await kill(first)

    // Redis gone, at once (no waiting for the client to notice).
    const downLatencies = latencies()
    for (let round = 0; round < 5; round++) {
      const get = await send.getOrders()
      t.equal(get.response.statusCode, 200, 'a REST read succeeds')
      t.same(rateLimitFields(get.response), [], 'without RateLimit fields')
      downLatencies['REST GET']!.push(get.ms)

      const post = await send.postArticle()
      t.equal(post.response.statusCode, 201, 'a REST write succeeds')
      t.same(rateLimitFields(post.response), [], 'without RateLimit fields')
      downLatencies['REST POST']!.push(post.ms)

      statements = 0
      const query = await send.graphql()
      t.equal(query.response.statusCode, 200, 'a GraphQL query succeeds')
      t.equal(query.response.json().errors, undefined, 'with no error')
      t.equal(query.response.json().data.articles[0].title, 'Outage', 'and current data')
      t.equal(query.response.json().extensions?.cost, undefined, 'without a points report it cannot know')
      t.same(rateLimitFields(query.response), [], 'without RateLimit fields')
      t.ok(statements > 0, 'the cache is bypassed: the query reads the database')
      downLatencies['GraphQL query']!.push(query.ms)
    }
    const health = await send.healthz()
    t.equal(health.statusCode, 200)
    t.same(health.json(), { status: 'ok' })
    const ready = await send.readyz()
    t.equal(ready.statusCode, 200, '/readyz stays 200')
    t.match(ready.json(), { status: 'ready', database, redis: 'degraded' })
    // Printed, not asserted (the machine is shared): requests cost about the same with Redis gone.
    for (const [what, ms] of Object.entries(downLatencies)) {
      const fmt = (values: number[]) => values.map((m) => m.toFixed(1)).join(', ')
      t.comment(`${what}: with Redis up ${fmt(upLatencies[what]!)} ms; with Redis down ${fmt(ms)} ms`)
    }

    const warnings = log.lines.filter((line) => line.msg.startsWith('Redis unavailable'))
    for (const feature of ['rate limit', 'GraphQL points', 'GraphQL cache']) {
      t.equal(
        warnings.filter((line) => line.feature === feature).length,
        1,
        `one warning for ${feature}, however many requests went on without Redis`,
      )
    }
    t.same(
      log.lines.filter((line) => line.level >= 50),
      [],
      'nothing logged at error level',
    )

    // Redis back on the same port, empty: the client reconnects by itself.
    await startRedis(t, port)
    await eventually(
      async () => (await send.readyz()).json().redis === 'ok' && rateLimitFields((await send.getOrders()).response).length > 0,
      15_000,
      'the budgets to come back',
    )
    const backQuery = (await send.graphql()).response
    t.equal(backQuery.statusCode, 200)
    t.ok(backQuery.json().extensions?.cost, 'GraphQL points are metered again')
    t.same(rateLimitFields(backQuery), RATE_LIMIT_FIELDS, 'and RateLimit fields are back')
    statements = 0
    await send.graphql()
    t.equal(statements, 0, 'the cache serves again')
  },
)

t.test('the service starts while its Redis is down, degraded, and uses Redis once it comes up', { skip }, async (t) => {
  const port = await freePort()
  const log = captureLog()
  const app = await build(t, {
    env: { REDIS_URL: `redis://127.0.0.1:${port}`, EVENTS_RELAY: 'false', LOG_LEVEL: 'warn' },
    loggerStream: log.stream,
  })
  t.ok(
    log.lines.some((line) => line.level === 40 && line.msg.startsWith('Redis is unreachable at start')),
    'the start warns that it runs degraded',
  )
  const send = requests(app)
  const get = (await send.getOrders()).response
  t.equal(get.statusCode, 200)
  t.same(rateLimitFields(get), [])
  const query = (await send.graphql()).response
  t.equal(query.statusCode, 200)
  t.equal(query.json().errors, undefined)
  t.equal((await send.healthz()).statusCode, 200)
  t.match((await send.readyz()).json(), { status: 'ready', database: app.database.kind, redis: 'degraded' })

  await startRedis(t, port)
  await eventually(
    async () => (await send.readyz()).json().redis === 'ok' && rateLimitFields((await send.getOrders()).response).length > 0,
    15_000,
    'Redis to be used once it is up',
  )
  t.ok((await send.graphql()).response.json().extensions?.cost, 'GraphQL points are metered in Redis')
})

t.test(
  'a Redis that stops answering: requests fail open, the silent connection is dropped, and Redis is used again once it answers',
  { skip },
  async (t) => {
    const port = await freePort()
    const server = await startRedis(t, port)
    const app = await build(t, { env: { REDIS_URL: `redis://127.0.0.1:${port}`, EVENTS_RELAY: 'false' } })
    const send = requests(app)
    t.same(rateLimitFields((await send.getOrders()).response), RATE_LIMIT_FIELDS)

    // SIGSTOP: the TCP connection stays open but nothing answers, the worst case for a client.
    server.kill('SIGSTOP')
    t.teardown(() => void (running(server) && server.kill('SIGCONT')))
    const latencies: Record<string, number[]> = { 'REST GET': [], 'REST POST': [], 'GraphQL query': [] }
    for (let round = 0; round < 3; round++) {
      const get = await send.getOrders()
      t.equal(get.response.statusCode, 200)
      t.same(rateLimitFields(get.response), [])
      latencies['REST GET']!.push(get.ms)
      const post = await send.postArticle()
      t.equal(post.response.statusCode, 201)
      latencies['REST POST']!.push(post.ms)
      const query = await send.graphql()
      t.equal(query.response.statusCode, 200)
      t.equal(query.response.json().errors, undefined)
      latencies['GraphQL query']!.push(query.ms)
    }
    t.equal((await send.healthz()).statusCode, 200)
    const ready = await send.readyz()
    t.equal(ready.statusCode, 200)
    t.equal(ready.json().redis, 'degraded')
    // Printed, not asserted: only the first request should wait out a command timeout.
    for (const [what, ms] of Object.entries(latencies)) {
      t.comment(`${what} with Redis hung: ${ms.map((m) => m.toFixed(1)).join(', ')} ms`)
    }

    server.kill('SIGCONT')
    await eventually(
      async () => (await send.readyz()).json().redis === 'ok' && rateLimitFields((await send.getOrders()).response).length > 0,
      15_000,
      'the budgets to come back',
    )
    t.ok((await send.graphql()).response.json().extensions?.cost, 'GraphQL points are metered again')
  },
)

t.test("a duplicate() of the app's client is a subscriber that waits for Redis and re-subscribes after a restart", { skip }, async (t) => {
  const port = await freePort()
  const first = await startRedis(t, port)
  const app = await build(t, { env: { REDIS_URL: `redis://127.0.0.1:${port}`, EVENTS_RELAY: 'false' } })
  const publisher = app.redis!
  const received: string[] = []
  const early = publisher.duplicate()
  t.teardown(() => early.disconnect())
  early.on('error', () => {})
  early.on('message', (_channel, message) => void received.push(`early:${message}`))
  await early.subscribe('outage-test')

  await kill(first)
  // Subscribed while Redis is down: waits for the connection rather than failing.
  const late = publisher.duplicate()
  t.teardown(() => late.disconnect())
  late.on('error', () => {})
  late.on('message', (_channel, message) => void received.push(`late:${message}`))
  let lateSubscribed = false
  const subscribing = late.subscribe('outage-test').then(() => void (lateSubscribed = true))
  await sleep(1500)
  t.notOk(lateSubscribed, 'the SUBSCRIBE is still waiting after several failed reconnects')

  await startRedis(t, port)
  await subscribing
  let sent = 0
  await eventually(
    async () => {
      await publisher.publish('outage-test', String(++sent)).catch(() => 0)
      await sleep(50)
      return received.some((m) => m.startsWith('early:')) && received.some((m) => m.startsWith('late:'))
    },
    15_000,
    'both subscribers to receive a message',
  )
  t.pass('the subscriber from before the outage re-subscribed, and the one from during it subscribed')
})
