/**
 * Database waits are bounded (decisions §12): a statement past DB_STATEMENT_TIMEOUT is cancelled
 * by the server, a server that answers nothing at all is given up on by the driver a little later,
 * and either way the request is 503 DATABASE_UNAVAILABLE with Retry-After, in REST and GraphQL.
 */
import t from 'tap'
import { createDatabase } from '../../src/db/database.ts'
import { bearer, build, createTestDatabase, gql } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { freezableRelay } from './freezable-relay.ts'
import { cloneDatabase, startServer } from './server-process.ts'
import { lockTable } from './table-lock.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

const SKIP = postgresUrl()
  ? false
  : 'needs a PostgreSQL server (DATABASE_URL): PGlite is one in-process session, so nothing can hold a lock it waits for, and it has no statement timeout'

const ORDERS_QUERY = '{ orders(first: 5) { id status } }'

t.test(
  'a server process with DB_STATEMENT_TIMEOUT=1s: REST and GraphQL answer 503 DATABASE_UNAVAILABLE while orders are locked, 200 once released',
  { skip: SKIP },
  async (t) => {
    const clone = await cloneDatabase(t, postgresUrl()!)
    const server = await startServer(t, clone.url, { DB_STATEMENT_TIMEOUT: '1s' })
    const headers = bearer(2, 'orders:read')
    const rest = () => fetch(`${server.baseUrl}/api/v1/orders`, { headers })
    const graphql = (accept: string) =>
      fetch(`${server.baseUrl}/graphql`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: ORDERS_QUERY }),
      })

    const lock = await lockTable(t, clone.url, 'orders')
    const started = performance.now()
    const blocked = await rest()
    const elapsed = performance.now() - started
    t.equal(blocked.status, 503)
    t.match(blocked.headers.get('content-type'), /^application\/problem\+json/)
    t.equal(blocked.headers.get('retry-after'), '5')
    const problem = (await blocked.json()) as Record<string, unknown>
    t.match(problem, { status: 503, code: 'DATABASE_UNAVAILABLE', type: '/problems/unavailable' })
    t.notMatch(JSON.stringify(problem), /statement timeout|cancel|select/i, 'no driver message or SQL leaks')
    t.comment(`REST answered 503 after ${elapsed.toFixed(0)} ms with DB_STATEMENT_TIMEOUT=1s`)

    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const started = performance.now()
      const response = await graphql(accept)
      const elapsed = performance.now() - started
      t.equal(response.status, 503, `GraphQL (${accept}) with no data is 503`)
      t.equal(response.headers.get('retry-after'), '5')
      const body = (await response.json()) as { data?: unknown; errors: Array<{ message: string; extensions: { code: string } }> }
      t.equal(body.data ?? null, null, 'no data')
      t.same(
        body.errors.map((e) => e.extensions.code),
        ['DATABASE_UNAVAILABLE'],
      )
      t.notMatch(body.errors[0]!.message, /statement timeout|cancel/i)
      t.comment(`GraphQL (${accept}) answered 503 after ${elapsed.toFixed(0)} ms`)
    }

    await lock.release()
    const restAfter = await rest()
    t.equal(restAfter.status, 200, 'REST recovers once the lock is released')
    t.ok(((await restAfter.json()) as { data: unknown[] }).data.length > 0)
    const graphqlAfter = await graphql('application/graphql-response+json')
    t.equal(graphqlAfter.status, 200, 'GraphQL too')
    const body = (await graphqlAfter.json()) as { data: { orders: unknown[] }; errors?: unknown }
    t.equal(body.errors, undefined)
    t.ok(body.data.orders.length > 0)
    t.equal(server.exit, undefined, 'the server process is still running')
  },
)

t.test(
  'in-process, a statement timeout is 503 in REST; in GraphQL 503 when nothing resolved, 200 with the fields that did when some did',
  { skip: SKIP },
  async (t) => {
    const database = await createTestDatabase(t, { statementTimeoutMs: 1000 })
    const app = await build(t, { database })
    const lock = await lockTable(t, database.url!, 'orders')

    const rest = await app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(2, 'orders:read') })
    t.equal(rest.statusCode, 503)
    t.equal(rest.headers['retry-after'], '5')
    t.match(rest.json(), { code: 'DATABASE_UNAVAILABLE' })

    const graphql = (query: string) =>
      gql(app, query, { ...bearer(1, 'admin'), 'content-type': 'application/json', accept: 'application/graphql-response+json' })
    const nothing = await graphql(ORDERS_QUERY)
    t.equal(nothing.statusCode, 503, 'orders is non-null, so its failure leaves no data: 503')
    t.equal(nothing.headers['retry-after'], '5')
    t.same(
      nothing.json().errors.map((e: { extensions: { code: string } }) => e.extensions.code),
      ['DATABASE_UNAVAILABLE'],
    )

    // `order` is nullable and `me` reads users, which are not locked: partial success.
    const partial = await graphql('{ me { name } order(id: "1") { id } }')
    t.equal(partial.statusCode, 200, 'a response that carries data stays 200')
    t.equal(partial.headers['retry-after'], undefined)
    const body = partial.json()
    t.same(body.data, { me: { name: 'Ada Lovelace' }, order: null })
    t.same(
      body.errors.map((e: { path: string[]; extensions: { code: string } }) => [e.path, e.extensions.code]),
      [[['order'], 'DATABASE_UNAVAILABLE']],
    )

    await lock.release()
    t.equal((await app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(2, 'orders:read') })).statusCode, 200)
    const recovered = await graphql('{ me { name } order(id: "1") { id } }')
    t.equal(recovered.statusCode, 200)
    t.same(recovered.json().data, { me: { name: 'Ada Lovelace' }, order: { id: toGlobalId('Order', 1) } })
  },
)

t.test(
  'a server that answers nothing: the request is 503 a little after the statement timeout, the silent connection is dropped, and the service recovers on thaw',
  { skip: SKIP },
  async (t) => {
    const direct = await createTestDatabase(t)
    // The same private database, reached through the relay.
    const relay = await freezableRelay(t, new URL(direct.url!))
    const handle = await createDatabase({ url: relay.url, poolSize: 2, statementTimeoutMs: 500, logger: { warn: () => {} } })
    t.teardown(() => handle.close())
    // No relay: the request below is then the pool's only user.
    const app = await build(t, { database: handle, env: { EVENTS_RELAY: 'false' } })
    const list = () => app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(2, 'orders:read') })
    t.equal((await list()).statusCode, 200, 'through the relay, before the freeze')

    let dropped = 0
    handle.pool!.on('release', (destroy) => {
      if (destroy) dropped += 1
    })
    relay.freeze()
    const started = performance.now()
    const frozen = await list()
    const elapsed = performance.now() - started
    t.equal(frozen.statusCode, 503)
    t.equal(frozen.headers['retry-after'], '5')
    t.match(frozen.json(), { code: 'DATABASE_UNAVAILABLE' })
    // At least: event delivery reads through the same pool, and a read caught by the freeze is dropped too.
    t.ok(dropped >= 1, 'the connection whose query went unanswered was released to be closed, not pooled again')
    t.comment(`answered 503 after ${elapsed.toFixed(0)} ms (statement timeout 500 ms, a unit of database work bounded at 1500 ms)`)

    relay.thaw()
    t.equal((await list()).statusCode, 200, 'recovers once the server answers again')
  },
)
