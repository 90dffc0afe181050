// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The bench's load generators (bench/load.ts) against a real HTTP server: each counts 2xx, non-2xx
 * and GraphQL errors as the server answered them, sends a new Idempotency-Key on every request
 * that needs one, and a fixed-rate round sends no more than its rate allows. wrk runs when it is
 * installed (.ci/run installs it); no timing is asserted.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { autocannonGenerator, findWrk, type LoadGenerator, wrkGenerator } from '../../bench/load.ts'
import { medianInterval, pairedRatios } from '../../bench/ratios.ts'

t.test('medianInterval: the distribution-free 95 % interval of a median', async (t) => {
  const twelve = [12, 3, 7, 1, 9, 5, 11, 2, 8, 4, 10, 6]
  t.same(medianInterval(twelve), [3, 10], 'the 3rd and the 10th of 12')
  t.same(medianInterval([5, 1, 4, 2, 6, 3]), [1, 6], 'the least and the most of 6')
  t.equal(medianInterval([1, 2, 3, 4, 5]), null, 'none under 6 values')
  const twenty = Array.from({ length: 20 }, (_, index) => index + 1)
  t.same(medianInterval(twenty), [6, 15], 'the 6th and the 15th of 20')
})

t.test('pairedRatios pairs round k with round k and leaves out rejected rounds', async (t) => {
  const rounds = (values: Array<number | null>, rejected: number[] = []) =>
    values.map((value, index) => ({ value, rejected: rejected.includes(index) ? 'non-2xx' : null }))
  t.same(
    pairedRatios(rounds([2, 4, 6, 8]), rounds([1, 2, null, 4], [3]), (round) => round.value),
    [2, 2],
  )
})

interface Seen {
  requests: number
  keys: Set<string>
}

async function startServer(t: Test): Promise<{ url: string; seen: Seen }> {
  const seen: Seen = { requests: 0, keys: new Set() }
  const server = http.createServer((request, response) => {
    seen.requests++
    const key = request.headers['idempotency-key']
    if (typeof key === 'string') seen.keys.add(key)
    request.resume()
    request.on('end', () => {
      response.setHeader('content-type', 'application/json')
      if (request.url === '/missing') {
        response.statusCode = 404
        response.end('{"title":"Not Found"}')
      } else if (request.url === '/graphql') {
        // Every third answer has GraphQL errors, with a 200 as GraphQL servers answer them.
        response.end(seen.requests % 3 === 0 ? '{"errors":[{"message":"no"}]}' : '{"data":{"ok":true}}')
      } else response.end('{"ok":true}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

async function generators(): Promise<LoadGenerator[]> {
  const wrk = await findWrk()
  return wrk ? [wrkGenerator(wrk), autocannonGenerator()] : [autocannonGenerator()]
}

for (const generator of await generators()) {
  t.test(`${generator.name}: counts what the server answered`, async (t) => {
    const { url, seen } = await startServer(t)
    const ok = await generator.load(
      url,
      { method: 'GET', path: '/ok', headers: { authorization: 'Bearer x' }, graphql: false },
      { seconds: 1, connections: 4 },
    )
    t.ok(ok.ok > 0, 'answers counted')
    t.equal(ok.non2xx + ok.errors + ok.timeouts + ok.graphqlErrors, 0, 'no failure where there was none')
    t.ok(ok.sent >= ok.ok && ok.sent <= seen.requests + 4, 'requests sent: those answered and at most one in flight per connection')
    t.ok(ok.bytesRead > ok.ok * '{"ok":true}'.length, 'bytes read, headers included')
    t.ok(ok.latencyMs.p99 >= ok.latencyMs.p50, 'latency percentiles in order')

    const missing = await generator.load(
      url,
      { method: 'GET', path: '/missing', headers: {}, graphql: false },
      { seconds: 1, connections: 2 },
    )
    t.ok(missing.non2xx > 0, 'a 404 is counted as non-2xx')
    t.equal(missing.ok, 0, 'and not as an answer')

    const graphql = await generator.load(
      url,
      { method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: '{"query":"{ ok }"}', graphql: true },
      { seconds: 1, connections: 2 },
    )
    t.ok(graphql.graphqlErrors > 0, 'answers with GraphQL errors are counted')
    t.ok(graphql.graphqlErrors < graphql.ok, 'only those')
  })

  t.test(`${generator.name}: a new Idempotency-Key on every request, and a fixed rate`, async (t) => {
    const { url, seen } = await startServer(t)
    const created = await generator.load(
      url,
      {
        method: 'POST',
        path: '/orders',
        headers: { 'content-type': 'application/json' },
        body: '{"sku":"é"}',
        freshIdempotencyKey: true,
        graphql: false,
      },
      { seconds: 1, connections: 4 },
    )
    t.ok(created.ok > 0, 'creates answered')
    t.equal(seen.keys.size, seen.requests, 'every request the server saw had a key of its own')

    const before = seen.requests
    const started = performance.now()
    const fixedRate = await generator.load(
      url,
      { method: 'GET', path: '/ok', headers: {}, graphql: false },
      { seconds: 1, connections: 4, rate: 50 },
    )
    const elapsedSeconds = (performance.now() - started) / 1000
    t.ok(fixedRate.ok > 0, 'answers at a fixed rate')
    // A loaded machine stops a generator late, and its pacing goes on until it stops: the bound is
    // the time the round took as this process saw it (longer than the generator's own), not one
    // second. wrk's script sends request k at k / 50 s after the first, whatever the connection (its
    // timers run in whole milliseconds: up to 2 ms early); autocannon lets each connection send its
    // share of 50 in every second that has begun. Without pacing, four connections to this server
    // send thousands in a second.
    const allowed = generator.name === 'wrk' ? Math.floor(50 * (elapsedSeconds + 0.002)) + 1 : 50 * Math.ceil(elapsedSeconds)
    const paced = seen.requests - before
    t.ok(paced <= allowed, `no more than the rate allows: ${paced} in ${elapsedSeconds.toFixed(2)} s, at most ${allowed}`)
  })
}
