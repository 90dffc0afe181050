/**
 * A create is one statement in autocommit (decisions §7, "A write in one statement"): for a keyed
 * create, its replay, a 409 while another request holds the key and a 422 for another request's
 * key, the driver sends one statement and no BEGIN, COMMIT or savepoint; so does an unkeyed
 * create. A keyed refusal (an unknown sku) sends two: the statement that found it, then the one
 * that stores it. Counted where the driver sends them, BEGIN and COMMIT included: pg's
 * `client.query` on PostgreSQL, PGlite's protocol messages (a simple Query or an Execute) on
 * PGlite; only those the request itself sends (its async context), not the background's.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import t from 'tap'
import pg from 'pg'
import type { DatabaseHandle } from '../../../src/db/database.ts'
import { bearer, build, createTestDatabase } from '../../helper.ts'
import { postgresUrl } from '../../setup/templates.ts'

const grace = bearer(2, 'orders:read orders:write')
const items = [
  { sku: 'KB-101', qty: 2 },
  { sku: 'MS-202', qty: 1 },
]

/** The frontend messages that run a statement: a simple Query ('Q') or an extended-protocol Execute ('E'). */
const QUERY = 0x51
const PARSE = 0x50
const EXECUTE = 0x45

/**
 * Records the text of every statement the app's driver sends in `request`'s async context (a
 * request's, not the event delivery's or the webhook worker's, which share the driver): on
 * PostgreSQL each `query` call of a pooled client (a checked-out client is wrapped once); on PGlite
 * each Query and Execute message (an Execute runs the text its Parse sent last).
 */
function watchDriver(database: DatabaseHandle, request: AsyncLocalStorage<string[]>): void {
  const record = (text: string) => request.getStore()?.push(text)
  const { pool, pglite } = database
  if (pool) {
    const wrapped = new WeakSet<pg.PoolClient>()
    pool.on('acquire', (client) => {
      if (wrapped.has(client)) return
      wrapped.add(client)
      const query = client.query.bind(client) as (...args: unknown[]) => unknown
      // pg's overloads take a text or a config with one; the database module uses both.
      ;(client as { query: unknown }).query = (config: string | { text: string }, ...rest: unknown[]) => {
        record(typeof config === 'string' ? config : config.text)
        return query(config, ...rest)
      }
    })
  } else if (pglite) {
    const exec = pglite.execProtocolStream.bind(pglite)
    let parsed = ''
    pglite.execProtocolStream = (message, options) => {
      const bytes = Buffer.from(message.buffer, message.byteOffset, message.byteLength)
      for (let offset = 0; offset + 5 <= bytes.length; offset += 1 + bytes.readUInt32BE(offset + 1)) {
        const type = bytes[offset]
        const body = bytes.subarray(offset + 5, offset + 1 + bytes.readUInt32BE(offset + 1))
        if (type === QUERY) record(body.toString('utf8', 0, body.indexOf(0)))
        else if (type === PARSE) parsed = body.toString('utf8', body.indexOf(0) + 1, body.indexOf(0, body.indexOf(0) + 1))
        else if (type === EXECUTE) record(parsed)
      }
      return exec(message, options)
    }
  }
}

async function setup(t: Parameters<typeof build>[0]) {
  const database = await createTestDatabase(t)
  const app = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
  const request = new AsyncLocalStorage<string[]>()
  watchDriver(database, request)
  const post = async (payload: { items: Array<{ sku: string; qty: number }> }, key?: string) => {
    const statements: string[] = []
    const response = await request.run(statements, () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...grace, ...(key === undefined ? {} : { 'idempotency-key': key }) },
        payload,
      }),
    )
    return { response, statements }
  }
  return { database, post }
}

const transactionControl = (statements: readonly string[]) =>
  statements.filter((statement) => /^\s*(begin|commit|rollback|savepoint|release)\b/i.test(statement))

t.test('a keyed create, its replay and a 422 for another request each send the driver one statement, no BEGIN or COMMIT', async (t) => {
  const { post } = await setup(t)
  const created = await post({ items }, 'one-statement-1')
  t.equal(created.response.statusCode, 201)
  t.equal(created.statements.length, 1, created.statements.join('\n'))
  t.match(
    created.statements[0],
    /idempotency_claim[\s\S]*insert into orders[\s\S]*insert into order_items[\s\S]*insert into outbox[\s\S]*insert into idempotency_keys[\s\S]*pg_notify/,
    'the claim, the order, its items, its event, the outcome and the wake-up in one',
  )

  const replayed = await post({ items }, 'one-statement-1')
  t.equal(replayed.response.statusCode, 201)
  t.equal(replayed.response.headers['idempotent-replayed'], 'true')
  t.same(replayed.response.json(), created.response.json())
  t.equal(replayed.statements.length, 1, replayed.statements.join('\n'))

  const reused = await post({ items: [{ sku: 'KB-101', qty: 1 }] }, 'one-statement-1')
  t.equal(reused.response.statusCode, 422)
  t.equal(reused.response.json().code, 'IDEMPOTENCY_KEY_REUSED')
  t.equal(reused.statements.length, 1, reused.statements.join('\n'))

  const unkeyed = await post({ items })
  t.equal(unkeyed.response.statusCode, 201)
  t.equal(unkeyed.statements.length, 1, unkeyed.statements.join('\n'))
  t.notMatch(unkeyed.statements[0], /idempotency/, 'without a key, no claim and no outcome')

  const every = [created, replayed, reused, unkeyed].flatMap((sent) => sent.statements)
  t.same(transactionControl(every), [], 'no transaction control at all')
})

t.test('a keyed refusal sends two statements: the one that found it wrote nothing, the second stores it', async (t) => {
  const { database, post } = await setup(t)
  const refused = await post({ items: [{ sku: 'NOPE-1', qty: 1 }] }, 'one-statement-2')
  t.equal(refused.response.statusCode, 422)
  t.equal(refused.response.json().code, 'UNKNOWN_SKU')
  t.equal(refused.statements.length, 2, refused.statements.join('\n'))
  t.same(transactionControl(refused.statements), [])
  t.match(refused.statements[1], /idempotency_claim[\s\S]*insert into idempotency_keys/, 'the second claims the key again and stores')
  t.notMatch(refused.statements[1], /insert into orders/)
  const orders = await database.db.selectFrom('orders').select('id').where('user_id', '=', 2).execute()
  const replayed = await post({ items: [{ sku: 'NOPE-1', qty: 1 }] }, 'one-statement-2')
  t.equal(replayed.response.statusCode, 422)
  t.equal(replayed.response.headers['idempotent-replayed'], 'true', 'the stored refusal replays')
  t.equal(replayed.statements.length, 1, 'in one statement')
  t.same(await database.db.selectFrom('orders').select('id').where('user_id', '=', 2).execute(), orders, 'and nothing was written')

  const unkeyed = await post({ items: [{ sku: 'NOPE-1', qty: 1 }] })
  t.equal(unkeyed.response.statusCode, 422)
  t.equal(unkeyed.statements.length, 1, 'without a key there is nothing to store: one statement')
})

t.test(
  'a first request still running with the same key: 409 in one statement',
  { skip: postgresUrl() ? false : 'PGlite runs one session: no other transaction can hold the key' },
  async (t) => {
    const { database, post } = await setup(t)
    const holder = new pg.Client({ connectionString: database.url })
    await holder.connect()
    t.teardown(() => holder.end())
    await holder.query('begin')
    await holder.query(`select pg_advisory_xact_lock(hashtextextended('2:one-statement-3', 7))`)
    const running = await post({ items }, 'one-statement-3')
    t.equal(running.response.statusCode, 409)
    t.equal(running.response.json().code, 'IDEMPOTENCY_KEY_IN_USE')
    t.equal(running.response.headers['retry-after'], '1')
    t.equal(running.statements.length, 1, running.statements.join('\n'))
    await holder.query('rollback')
  },
)
