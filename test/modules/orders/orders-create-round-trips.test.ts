/**
 * A create is one statement in autocommit (decisions §7, "A write in one statement"): for a keyed
 * create, its replay, a 409 while another request holds the key and a 422 for another request's
 * key, the driver sends one statement and no BEGIN, COMMIT or savepoint; so does an unkeyed
 * create. A keyed refusal (an unknown sku) sends two: the statement that found it, then the one
 * that stores it. An order action stays a transaction (its check runs If-Match), with a keyed
 * action's outcome stored in its event's statement. Counted where the driver sends them, BEGIN and
 * COMMIT included (test/driver-statements.ts).
 */
import t from 'tap'
import pg from 'pg'
import { transactionControl, watchDriverStatements } from '../../driver-statements.ts'
import { bearer, build, createTestDatabase } from '../../helper.ts'
import { postgresUrl } from '../../setup/templates.ts'

const grace = bearer(2, 'orders:read orders:write')
const items = [
  { sku: 'KB-101', qty: 2 },
  { sku: 'MS-202', qty: 1 },
]

async function setup(t: Parameters<typeof build>[0]) {
  const database = await createTestDatabase(t)
  const app = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
  const driver = watchDriverStatements(database)
  const post = async (payload: { items: Array<{ sku: string; qty: number }> }, key?: string) => {
    const { result: response, statements } = await driver.during(() =>
      app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...grace, ...(key === undefined ? {} : { 'idempotency-key': key }) },
        payload,
      }),
    )
    return { response, statements }
  }
  const pay = (id: number, key: string) =>
    driver.during(() => app.inject({ method: 'POST', url: `/api/v1/orders/${id}/payment`, headers: { ...grace, 'idempotency-key': key } }))
  return { database, post, pay }
}

t.test('a keyed create, its replay and a 422 for another request each send the driver one statement, no BEGIN or COMMIT', async (t) => {
  const { post } = await setup(t)
  const created = await post({ items }, 'one-statement-1')
  t.equal(created.response.statusCode, 201)
  t.equal(created.statements.length, 1, 'a keyed create: one statement', { statements: created.statements })
  t.match(
    created.statements[0],
    /idempotency_claim[\s\S]*insert into orders[\s\S]*insert into order_items[\s\S]*insert into outbox[\s\S]*insert into idempotency_keys[\s\S]*pg_notify/,
    'the claim, the order, its items, its event, the outcome and the wake-up in one',
  )

  const replayed = await post({ items }, 'one-statement-1')
  t.equal(replayed.response.statusCode, 201)
  t.equal(replayed.response.headers['idempotent-replayed'], 'true')
  t.same(replayed.response.json(), created.response.json())
  t.equal(replayed.statements.length, 1, 'its replay: one statement', { statements: replayed.statements })

  const reused = await post({ items: [{ sku: 'KB-101', qty: 1 }] }, 'one-statement-1')
  t.equal(reused.response.statusCode, 422)
  t.equal(reused.response.json().code, 'IDEMPOTENCY_KEY_REUSED')
  t.equal(reused.statements.length, 1, 'another request with its key: one statement', { statements: reused.statements })

  const unkeyed = await post({ items })
  t.equal(unkeyed.response.statusCode, 201)
  t.equal(unkeyed.statements.length, 1, 'an unkeyed create: one statement', { statements: unkeyed.statements })
  t.notMatch(unkeyed.statements[0], /idempotency/, 'without a key, no claim and no outcome')

  const every = [created, replayed, reused, unkeyed].flatMap((sent) => sent.statements)
  t.same(transactionControl(every), [], 'no transaction control at all')
})

t.test('a keyed refusal sends two statements: the one that found it wrote nothing, the second stores it', async (t) => {
  const { database, post } = await setup(t)
  const refused = await post({ items: [{ sku: 'NOPE-1', qty: 1 }] }, 'one-statement-2')
  t.equal(refused.response.statusCode, 422)
  t.equal(refused.response.json().code, 'UNKNOWN_SKU')
  t.equal(refused.statements.length, 2, 'a keyed refusal: two statements', { statements: refused.statements })
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

t.test("a keyed action is a transaction whose outcome is stored in its event's statement", async (t) => {
  const { post, pay } = await setup(t)
  const created = await post({ items }, 'one-statement-4')
  const paid = await pay(created.response.json().id, 'one-statement-5')
  t.equal(paid.result.statusCode, 200)
  t.match(paid.statements[0], /^begin/i)
  t.match(paid.statements.at(-1), /^commit/i)
  const outcomes = paid.statements.filter((statement) => /insert into idempotency_keys/.test(statement))
  t.equal(outcomes.length, 1, 'the outcome stored once', { statements: paid.statements })
  t.match(outcomes[0], /insert into outbox[\s\S]*insert into idempotency_keys/, 'with the event, in one statement')
  t.equal(paid.statements.length, 7, 'BEGIN, the claim, the order, its items, the change, the event and outcome, COMMIT', {
    statements: paid.statements,
  })
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
    t.equal(running.statements.length, 1, 'a 409: one statement', { statements: running.statements })
    await holder.query('rollback')
  },
)
