/**
 * Behind PgBouncer in transaction pooling mode with its default settings (decisions §13): the
 * service starts (no startup parameter), serves REST and GraphQL, keeps an Idempotency-Key's
 * create exactly-once under a race, has its statement timeout enforced by the server per
 * transaction and per read, leaves no session setting behind, and delivers events through the
 * LISTEN connection on EVENTS_DATABASE_URL (direct), or by the poll with EVENTS_DATABASE_URL=poll
 * or unset. The connection mode is found out at start: pooled behind PgBouncer (the startup
 * parameter refused, or ignored), direct on the server itself, and DB_POOLED overrides it.
 * The service runs as a real process (src/server.ts) on a clone of the test template, and, for a
 * first deployment, as three processes starting at once on an empty database (migrated and seeded
 * once through PgBouncer).
 */
import t, { type Test } from 'tap'
import { LISTENER_APPLICATION_NAME } from '../../src/events/listener.ts'
import { client, eventually } from '../graphql/subscription-clients.ts'
import { bearer, tokenFor } from '../helper.ts'
import {
  adminQuery,
  createServerDatabase,
  dropServerDatabase,
  postgresUrl,
  templateDatabaseName,
  withDatabase,
} from '../setup/templates.ts'
import { cloneDatabase, startServer, type ServerProcess } from '../faults/server-process.ts'
import { lockTable } from '../faults/table-lock.ts'
import { pgbouncerUnavailable, startPgBouncer } from './pgbouncer.ts'

const SKIP = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set): PgBouncer fronts a PostgreSQL server'
  : process.env.CI
    ? false
    : (pgbouncerUnavailable() ?? false)

async function createOrder(server: ServerProcess, key?: string): Promise<Response> {
  return fetch(`${server.baseUrl}/api/v1/orders`, {
    method: 'POST',
    headers: { ...bearer(2, 'orders:write'), 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
  })
}

/** A subscriber of Grace's new orders on `server`; returns the ids it received. */
async function subscriber(t: Test, server: ServerProcess): Promise<string[]> {
  const received: string[] = []
  let subscribed = false
  const ws = client(t, `${server.baseUrl.replace(/^http/, 'ws')}/graphql`, tokenFor(2, 'orders:read'))
  ws.on('connected', () => void (subscribed = true))
  ws.subscribe<{ orderCreated: { databaseId: number } }>(
    { query: 'subscription { orderCreated { databaseId } }' },
    {
      next: (message) => void (message.data && received.push(String(message.data.orderCreated.databaseId))),
      error: () => {},
      complete: () => {},
    },
  )
  if (!(await eventually(() => subscribed))) throw new Error('the subscriber did not connect')
  // The subscribe message follows the connection ack; give the server a moment to register it.
  await new Promise((resolve) => setTimeout(resolve, 200))
  return received
}

t.test('behind PgBouncer (transaction pooling, default settings)', { skip: SKIP }, async (t) => {
  const serverUrl = postgresUrl()!
  const clone = await cloneDatabase(t, serverUrl)
  const bouncer = await startPgBouncer(t, serverUrl)
  const pooled = bouncer.through(clone.url)

  t.test('the service starts, serves REST, GraphQL, an idempotency race and events over LISTEN on EVENTS_DATABASE_URL', async (t) => {
    const server = await startServer(t, pooled, { EVENTS_DATABASE_URL: clone.url, DB_STATEMENT_TIMEOUT: '5s' })
    t.notOk(/unsupported startup parameter/.test(server.stderr), 'PgBouncer accepted every connection')
    t.ok(
      server.messages.some((message) => message.startsWith('database connections are pooled')),
      'PgBouncer refused the startup parameter: the pool is pooled',
    )

    const received = await subscriber(t, server)
    const created = await createOrder(server)
    t.equal(created.status, 201, 'REST create')
    const order = (await created.json()) as { id: number }
    const read = await fetch(`${server.baseUrl}/api/v1/orders/${order.id}`, { headers: bearer(2, 'orders:read') })
    t.equal(read.status, 200, 'REST read outside a transaction')
    const list = await fetch(`${server.baseUrl}/api/v1/orders?limit=2`, { headers: bearer(2, 'orders:read') })
    t.equal(list.status, 200, 'REST list')

    const graphql = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { ...bearer(2, 'orders:read orders:write'), 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `query ($id: ID!) { order(id: $id) { databaseId total user { name } } }`,
        variables: { id: String(order.id) },
      }),
    })
    t.equal(graphql.status, 200, 'GraphQL')
    t.match(await graphql.json(), { data: { order: { databaseId: order.id, user: { name: 'Grace Hopper' } } } })

    // Twelve concurrent creates with one key: one order; each racer gets it (201) or is told the
    // key is in use (409), and a retry after the race replays the same order.
    const countOrders = async () =>
      Number((await adminQuery<{ count: string }>(clone.url, 'select count(*) from orders where user_id = 2'))[0]!.count)
    const before = await countOrders()
    const key = `pgbouncer-race-${process.pid}`
    const answers = await Promise.all(Array.from({ length: 12 }, () => createOrder(server, key)))
    const bodies = await Promise.all(
      answers.map(async (answer) => ({ status: answer.status, body: (await answer.json()) as Record<string, unknown> })),
    )
    t.ok(
      bodies.some((answer) => answer.status === 201),
      'one racer created it',
    )
    for (const answer of bodies.filter((answer) => answer.status !== 201))
      t.match(answer, { status: 409, body: { code: 'IDEMPOTENCY_KEY_IN_USE' } }, 'the others were told the key is in use')
    const replay = await createOrder(server, key)
    t.equal(replay.status, 201)
    t.equal(replay.headers.get('idempotent-replayed'), 'true', 'replayed after the race')
    const raced = ((await replay.json()) as { id: number }).id
    t.same(new Set(bodies.filter((answer) => answer.status === 201).map((answer) => answer.body.id)), new Set([raced]), 'one order id')
    t.equal(await countOrders(), before + 1, 'stored once')

    t.ok(
      await eventually(() => received.includes(String(order.id)) && received.includes(String(raced)), 10_000),
      'the subscriber received both orders',
    )
    const listeners = await adminQuery<{ count: string }>(
      clone.url,
      'select count(*) from pg_stat_activity where datname = $1 and application_name = $2',
      [clone.name, LISTENER_APPLICATION_NAME],
    )
    t.equal(Number(listeners[0]!.count), 1, 'one LISTEN connection, on the direct URL')
    t.same(server.warnings, [], 'no warning logged')
  })

  t.test('the statement timeout is the server’s, per transaction and per read, and no session keeps it', async (t) => {
    const server = await startServer(t, pooled, { EVENTS_DATABASE_URL: 'poll', DB_STATEMENT_TIMEOUT: '500ms' })
    const lock = await lockTable(t, clone.url, 'orders')
    const waiting = () =>
      adminQuery<{ count: string }>(
        clone.url,
        `select count(*) from pg_locks l join pg_class c on c.oid = l.relation
          where c.relname = 'orders' and not l.granted and l.database = (select oid from pg_database where datname = $1)`,
        [clone.name],
      ).then((rows) => Number(rows[0]!.count))

    // A read outside a transaction, and a create (a transaction): both wait on the lock until the
    // server cancels them. Were the timeout the driver's deadline alone, the backend would go on
    // waiting on the lock after the answer; the server's own cancel leaves no waiter behind.
    const read = await fetch(`${server.baseUrl}/api/v1/orders/1`, { headers: bearer(2, 'orders:read') })
    t.equal(read.status, 503, 'a locked read is 503')
    t.equal(await waiting(), 0, 'the server cancelled the read: nothing waits on the lock')
    const create = await createOrder(server, `pgbouncer-timeout-${process.pid}`)
    t.equal(create.status, 503, 'a locked create is 503')
    t.equal(await waiting(), 0, 'the server cancelled the transaction: nothing waits on the lock')
    await lock.release()

    const after = await createOrder(server, `pgbouncer-timeout-${process.pid}`)
    t.equal(after.status, 201, 'the same key succeeds once the lock is gone: the refused attempt stored nothing')
    // Every server connection PgBouncer holds for this database, read through PgBouncer: none
    // carries the service's timeout as a session setting.
    const settings = await adminQuery<{ statement_timeout: string }>(pooled, 'show statement_timeout')
    t.equal(settings[0]!.statement_timeout, '0', 'a pooled session has the server default')
  })

  t.test('EVENTS_DATABASE_URL=poll: no LISTEN connection, events still arrive by the poll', async (t) => {
    const server = await startServer(t, pooled, { EVENTS_DATABASE_URL: 'poll' })
    const received = await subscriber(t, server)
    const created = await createOrder(server)
    t.equal(created.status, 201)
    const { id } = (await created.json()) as { id: number }
    t.ok(await eventually(() => received.includes(String(id)), 10_000), 'delivered')
    const listeners = await adminQuery<{ count: string }>(
      clone.url,
      'select count(*) from pg_stat_activity where datname = $1 and application_name = $2',
      [clone.name, LISTENER_APPLICATION_NAME],
    )
    t.equal(Number(listeners[0]!.count), 0, 'no LISTEN connection')
  })

  const listenConnections = async () =>
    Number(
      (
        await adminQuery<{ count: string }>(
          clone.url,
          'select count(*) from pg_stat_activity where datname = $1 and application_name = $2',
          [clone.name, LISTENER_APPLICATION_NAME],
        )
      )[0]!.count,
    )

  t.test('pooled without EVENTS_DATABASE_URL: no LISTEN through the pooler, events arrive by the poll', async (t) => {
    const server = await startServer(t, pooled)
    t.ok(
      server.messages.some((message) => /delivered by the one-second poll/.test(message)),
      'the poll is named',
    )
    const received = await subscriber(t, server)
    const created = await createOrder(server)
    t.equal(created.status, 201)
    const { id } = (await created.json()) as { id: number }
    t.ok(await eventually(() => received.includes(String(id)), 10_000), 'delivered')
    t.equal(await listenConnections(), 0, 'no LISTEN connection')
    t.same(server.warnings, [], 'no warning logged')
  })

  t.test('PgBouncer ignoring the startup parameter (ignore_startup_parameters): SHOW tells, the pool is pooled', async (t) => {
    const ignoring = await startPgBouncer(t, serverUrl, ['ignore_startup_parameters = statement_timeout'])
    const server = await startServer(t, ignoring.through(clone.url), { EVENTS_DATABASE_URL: 'poll', DB_STATEMENT_TIMEOUT: '500ms' })
    t.ok(
      server.messages.some((message) => message.startsWith('database connections are pooled')),
      'pooled',
    )
    const lock = await lockTable(t, clone.url, 'orders')
    const read = await fetch(`${server.baseUrl}/api/v1/orders/1`, { headers: bearer(2, 'orders:read') })
    t.equal(read.status, 503, 'the timeout still cancels a locked read')
    await lock.release()
    const after = await fetch(`${server.baseUrl}/api/v1/orders/1`, { headers: bearer(2, 'orders:read') })
    t.equal(after.status, 200, 'and the read succeeds once the lock is gone')
  })

  t.test('direct: the statement timeout is the session’s, and events LISTEN on DATABASE_URL', async (t) => {
    const server = await startServer(t, clone.url, { DB_STATEMENT_TIMEOUT: '500ms' })
    t.ok(
      server.messages.some((message) => message.startsWith('database connections are direct')),
      'direct',
    )
    const lock = await lockTable(t, clone.url, 'orders')
    const read = await fetch(`${server.baseUrl}/api/v1/orders/1`, { headers: bearer(2, 'orders:read') })
    t.equal(read.status, 503, 'the session’s timeout cancels a locked read')
    await lock.release()
    t.equal(await listenConnections(), 1, 'one LISTEN connection, on DATABASE_URL')
  })

  t.test('DB_POOLED overrides what is found out', async (t) => {
    const forcedPooled = await startServer(t, clone.url, { DB_POOLED: 'true' })
    t.ok(
      forcedPooled.messages.some((message) => message.startsWith('database connections are pooled')),
      'DB_POOLED=true: pooled on a direct URL',
    )
    t.equal(await listenConnections(), 0, 'pooled without EVENTS_DATABASE_URL: no LISTEN connection')
    forcedPooled.child.kill('SIGKILL')

    const forcedDirect = await startServer(t, pooled, { DB_POOLED: 'false', EVENTS_DATABASE_URL: 'poll' }).then(
      () => new Error('it started'),
      (error: Error) => error,
    )
    t.match(
      forcedDirect.message,
      /\(code 1, signal null\): cannot start: unsupported startup parameter: statement_timeout \(08P01\)\n$/,
      'DB_POOLED=false through PgBouncer: direct, so the startup parameter is sent, refused, and the start ends with one line',
    )
  })

  t.test('an empty database: three instances starting at once through PgBouncer migrate and seed it once', async (t) => {
    const name = `${clone.name}_empty`
    const direct = await createServerDatabase(serverUrl, name)
    t.teardown(() => dropServerDatabase(serverUrl, name))
    // Kysely's own migration lock is a session's (lock, then unlock): behind PgBouncer the unlock
    // may reach another server session. The start must not rely on that.
    const servers = await Promise.all(
      Array.from({ length: 3 }, () => startServer(t, bouncer.through(direct), { SEED: 'true', EVENTS_DATABASE_URL: 'poll' })),
    )
    for (const server of servers) t.equal((await fetch(`${server.baseUrl}/readyz`)).status, 200, 'ready')
    const counts = (url: string) =>
      adminQuery<{ migrations: string; users: string; products: string; orders: string }>(
        url,
        `select (select count(*) from kysely_migration) as migrations, (select count(*) from users) as users,
                (select count(*) from products) as products, (select count(*) from orders) as orders`,
      ).then((rows) => rows[0])
    t.same(
      await counts(direct),
      await counts(withDatabase(serverUrl, templateDatabaseName(serverUrl))),
      'every migration once, the demo data once',
    )
    const products = await fetch(`${servers[2]!.baseUrl}/api/v1/products`, { headers: bearer(2, 'orders:read') })
    t.equal(products.status, 200, 'and it serves')
  })

  t.test('a start the pooler refuses ends with one line naming the cause and exit code 1', async (t) => {
    const missing = new URL(pooled)
    missing.pathname = `/${clone.name}_missing`
    const failed = await startServer(t, missing.toString()).then(
      () => new Error('it started'),
      (error: Error) => error,
    )
    t.match(
      failed.message,
      /^the server exited before listening \(code 1, signal null\): cannot start: database "[^"]+_missing" does not exist \(08P01\)\n$/,
      'one line, exit code 1',
    )
  })
})
