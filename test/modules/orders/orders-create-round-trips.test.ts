/**
 * A create with an Idempotency-Key makes fewer round trips than the bare insert baseline
 * (bench/baselines/fastify-rest.ts, seven): BEGIN, the key's claim (its lock and stored outcome in
 * one function call), the buyer and prices with the new order's id and time, one statement writing
 * the order with its items, its event and the stored outcome, COMMIT. No savepoint: every refusal
 * of a create comes before its first change. Statements are counted through Kysely's log hook,
 * BEGIN and COMMIT left out (the PGlite dialect's do not reach the hook; the bench's proxy counts
 * them: five in all); the outbox relay is off so its polling is not counted.
 */
import t from 'tap'
import { bearer, build } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const items = [
  { sku: 'KB-101', qty: 2 },
  { sku: 'MS-202', qty: 1 },
]

async function setup(t: Parameters<typeof build>[0]) {
  let statements: string[] = []
  const app = await build(t, { onQuery: (event) => void statements.push(event.query.sql), env: { EVENTS_RELAY: 'false' } })
  const post = async (key: string, payload: { items: Array<{ sku: string; qty: number }> }) => {
    statements = []
    const response = await app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...grace, 'idempotency-key': key }, payload })
    return { response, statements: statements.filter((statement) => !/^\s*(begin|commit)\s*$/i.test(statement)) }
  }
  return { post }
}

const savepoints = (statements: readonly string[]) => statements.filter((statement) => /savepoint/i.test(statement))

t.test('a keyed create runs three statements between BEGIN and COMMIT, none of them a savepoint', async (t) => {
  const { post } = await setup(t)
  const { response, statements } = await post('round-trips-1', { items })
  t.equal(response.statusCode, 201)
  t.equal(statements.length, 3, statements.join('\n'))
  t.match(statements[0], /idempotency_claim/, 'the claim is one statement, the first')
  t.match(
    statements[2],
    /insert into orders[\s\S]*insert into outbox[\s\S]*insert into idempotency_keys/,
    'the order, its event and the outcome in one',
  )
  t.same(savepoints(statements), [], 'no savepoint')
})

t.test(
  'a refused keyed create runs three statements between BEGIN and COMMIT, and its outcome is stored without a savepoint',
  async (t) => {
    const { post } = await setup(t)
    const refused = await post('round-trips-2', { items: [{ sku: 'NOPE-1', qty: 1 }] })
    t.equal(refused.response.statusCode, 422)
    t.equal(refused.statements.length, 3, refused.statements.join('\n'))
    t.same(savepoints(refused.statements), [], 'no savepoint')
    const replayed = await post('round-trips-2', { items: [{ sku: 'NOPE-1', qty: 1 }] })
    t.equal(replayed.response.statusCode, 422)
    t.equal(replayed.response.headers['idempotent-replayed'], 'true', 'the stored refusal replays')
  },
)

t.test('a replay runs one statement between BEGIN and COMMIT: the claim', async (t) => {
  const { post } = await setup(t)
  t.equal((await post('round-trips-3', { items })).response.statusCode, 201)
  const { response, statements } = await post('round-trips-3', { items })
  t.equal(response.statusCode, 201)
  t.equal(response.headers['idempotent-replayed'], 'true')
  t.same(
    statements.map((statement) => /idempotency_claim/.test(statement)),
    [true],
    statements.join('\n'),
  )
})
