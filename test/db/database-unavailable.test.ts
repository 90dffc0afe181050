import t from 'tap'
import { createServer } from 'node:net'
import { once } from 'node:events'
import pg from 'pg'
import { DatabaseDeadlineExceeded, isDatabaseUnavailable } from '../../src/db/database-unavailable.ts'
import { createDatabase } from '../../src/db/database.ts'
import { ApiError } from '../../src/errors.ts'
import { postgresUrl } from '../setup/templates.ts'

/** An error shaped as pg raises it: a message, and a SQLSTATE or socket code. */
const driverError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {})

t.test('outages are classified as database unavailable', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['connection refused', driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['connection reset', driverError('read ECONNRESET', 'ECONNRESET')],
    ['host unreachable', driverError('connect EHOSTUNREACH', 'EHOSTUNREACH')],
    ['socket closed under a query', driverError('Connection terminated unexpectedly')],
    [
      'connect timeout (pg-pool)',
      new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') }),
    ],
    ['connect timeout (client)', new Error('timeout expired')],
    ['no pooled client within connectionTimeoutMillis', new Error('timeout exceeded when trying to connect')],
    ['a transaction or read past its deadline (DB_STATEMENT_TIMEOUT and a margin)', new DatabaseDeadlineExceeded()],
    ['query on a client whose connection died', new Error('Client has encountered a connection error and is not queryable')],
    ['pool shutting down', new Error('Cannot use a pool after calling end on the pool')],
    ['Kysely dropped a connection after a failed rollback', new Error('Postgres connection has been discarded')],
    ['embedded database closed', new Error('PGlite is closed')],
    ['Kysely on a closed embedded database', new Error('PGlite instance is already closed.')],
    ['57P01 admin_shutdown (pg_terminate_backend)', driverError('terminating connection due to administrator command', '57P01')],
    ['57P02 crash_shutdown', driverError('terminating connection because of crash of another server process', '57P02')],
    ['57P03 cannot_connect_now', driverError('the database system is starting up', '57P03')],
    ['57014 query_canceled (statement_timeout)', driverError('canceling statement due to statement timeout', '57014')],
    ['53300 too_many_connections', driverError('sorry, too many clients already', '53300')],
    ['08006 connection_failure', driverError('connection failure', '08006')],
    ['08P01 protocol_violation', driverError('protocol violation', '08P01')],
    [
      'a refused connection to every address of a host',
      new AggregateError([
        driverError('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'),
        driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      ]),
    ],
    [
      'an outage wrapped as the cause of another error',
      new Error('transaction failed', { cause: driverError('read ECONNRESET', 'ECONNRESET') }),
    ],
  ]
  for (const [name, error] of cases) t.equal(isDatabaseUnavailable(error), true, name)
})

t.test('errors of the request or of the code are not outages', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['23505 unique_violation', driverError('duplicate key value violates unique constraint', '23505')],
    ['23503 foreign_key_violation', driverError('insert or update violates foreign key constraint', '23503')],
    ['42601 syntax_error', driverError('syntax error at or near "selec"', '42601')],
    ['40001 serialization_failure', driverError('could not serialize access', '40001')],
    ['57P04 database_dropped is not a transient outage', driverError('database dropped', '57P04')],
    ['a message that merely mentions a connection', new Error('Connection terminated by the user, said the log')],
    ['an ApiError', new ApiError('CONFLICT', 'Connection terminated')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['an empty AggregateError', new AggregateError([])],
    ['an AggregateError mixing an outage and a bug', new AggregateError([driverError('x', 'ECONNREFUSED'), new Error('boom')])],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
    ['undefined', undefined],
  ]
  for (const [name, error] of cases) t.equal(isDatabaseUnavailable(error), false, name)
})

t.test('what the drivers really raise when the server is unreachable or the database closed', async (t) => {
  // A port nobody listens on: taken, then released.
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')

  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/none`, connectionTimeoutMillis: 2000 })
  const refused = await client.connect().then(
    () => undefined,
    (error: unknown) => error,
  )
  t.ok(refused, 'pg refused to connect')
  t.equal(isDatabaseUnavailable(refused), true, 'pg connecting to a closed port')

  const pool = await createDatabase({ url: `postgres://postgres@127.0.0.1:${port}/none`, poolSize: 1 })
  const poolRefused = await pool.db
    .selectFrom('users')
    .select('id')
    .execute()
    .then(
      () => undefined,
      (error: unknown) => error,
    )
  await pool.close()
  t.equal(isDatabaseUnavailable(poolRefused), true, 'a Kysely query through the pool to a closed port')

  const pglite = await createDatabase({ url: 'memory://' })
  await pglite.pglite!.close()
  const closed = await pglite.db
    .selectFrom('users')
    .select('id')
    .execute()
    .then(
      () => undefined,
      (error: unknown) => error,
    )
  t.equal(isDatabaseUnavailable(closed), true, 'a query on a closed PGlite')
})

t.test(
  'what PostgreSQL really raises: a statement timeout and a terminated backend',
  { skip: postgresUrl() ? false : 'needs a PostgreSQL server (DATABASE_URL); PGlite has neither statement timeouts nor other backends' },
  async (t) => {
    const url = postgresUrl()!
    const victim = new pg.Client({ connectionString: url, statement_timeout: 100 })
    const errors: unknown[] = []
    victim.on('error', (error) => errors.push(error))
    await victim.connect()
    const pid = (await victim.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
    const timedOut = await victim.query('select pg_sleep(2)').then(
      () => undefined,
      (error: unknown) => error,
    )
    t.equal((timedOut as { code?: string } | undefined)?.code, '57014')
    t.equal(isDatabaseUnavailable(timedOut), true, 'statement timeout')

    // Only this test's own backend is terminated, by its pid.
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    t.teardown(() => admin.end())
    const ended = new Promise((resolve) => victim.once('end', resolve))
    const running = victim.query('select pg_sleep(5)').then(
      () => undefined,
      (error: unknown) => error,
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    await admin.query('select pg_terminate_backend($1)', [pid])
    const terminated = await running
    t.equal(isDatabaseUnavailable(terminated), true, `the query of a terminated backend (${(terminated as Error).message})`)
    await ended
    t.ok(errors.length > 0 && errors.every((error) => isDatabaseUnavailable(error)), 'and the client error event it emits')
  },
)
