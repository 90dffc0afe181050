/**
 * The writes that are one statement (src/db/write.ts, compileStatementWrite; decisions §7, "A
 * write in one statement") besides an order's create (test/modules/orders/orders-create-round-trips.test.ts):
 * creating a user, a product, an article and a comment. A keyed create is one statement the driver
 * sends, no BEGIN or COMMIT; its answer is the record as a read of it gives it (the statement built
 * it in SQL) and as its event carries it; its replay is one statement. A keyed refusal is stored by
 * a second statement and replays in one. And that second statement stores a refusal only while it
 * holds the key and finds no outcome: it never overwrites another request's.
 */
import t from 'tap'
import pg from 'pg'
import { storeOutcomeIfClaimed } from '../../src/db/repositories/idempotency-keys.ts'
import { transactionControl, watchDriverStatements } from '../driver-statements.ts'
import { bearer, build, createTestDatabase } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'

const ada = bearer(1, 'admin')
const grace = bearer(2, 'articles:write')

t.test(
  'a keyed create of a user, a product, an article and a comment is one statement, answers the record a read gives, and replays in one',
  async (t) => {
    const database = await createTestDatabase(t)
    const app = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
    const driver = watchDriverStatements(database)
    const post = async (url: string, headers: Record<string, string>, payload: object, key: string) => {
      const sent = await driver.during(() => app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, payload }))
      return { response: sent.result, statements: sent.statements }
    }
    const get = async (url: string, headers: Record<string, string>) => (await app.inject({ method: 'GET', url, headers })).json()
    const eventPayload = async (topic: string) =>
      (await database.db.selectFrom('outbox').select('payload').where('topic', '=', topic).orderBy('id', 'desc').executeTakeFirstOrThrow())
        .payload

    const user = { url: '/api/v1/users', headers: ada, payload: { name: 'Mary Jackson', company_id: 2 } }
    const product = { url: '/api/v1/products', headers: ada, payload: { sku: 'PN-707', name: 'Pen', price: 250 } }
    const article = { url: '/api/v1/articles', headers: grace, payload: { title: 'One statement', body: 'Claim, check, write, store.' } }
    const writes = { user, product, article }
    const answers: Record<string, Record<string, unknown>> = {}
    for (const [name, write] of Object.entries(writes)) {
      const created = await post(write.url, write.headers, write.payload, `one-${name}`)
      t.equal(created.response.statusCode, 201, name)
      t.equal(created.statements.length, 1, `${name}: one statement`, { statements: created.statements })
      t.same(transactionControl(created.statements), [], `${name}: no transaction control`)
      const replayed = await post(write.url, write.headers, write.payload, `one-${name}`)
      t.equal(replayed.response.headers['idempotent-replayed'], 'true', `${name}: replayed`)
      t.same(replayed.response.json(), created.response.json(), `${name}: the stored answer`)
      t.equal(replayed.statements.length, 1, `${name}: the replay is one statement`)
      answers[name] = created.response.json()
    }
    t.same(answers.user, await get(`/api/v1/users/${answers.user!.id}`, ada), 'the user as its read gives it')
    const catalogue = await get('/api/v1/products?limit=100', ada)
    t.same(
      answers.product,
      catalogue.data.find((listed: { sku: string }) => listed.sku === 'PN-707'),
      'the product as the catalogue lists it',
    )
    t.same(answers.article, await get(`/api/v1/articles/${answers.article!.id}`, grace), 'the article as its read gives it')
    t.same(
      await eventPayload('article.created'),
      { articleId: answers.article!.id, authorId: 2, article: answers.article },
      'its event carries it',
    )

    const comment = await post(`/api/v1/articles/${answers.article!.id}/comments`, grace, { body: 'Agreed.' }, 'one-comment')
    t.equal(comment.response.statusCode, 201)
    t.equal(comment.statements.length, 1, 'comment: one statement', { statements: comment.statements })
    const comments = await get(`/api/v1/articles/${answers.article!.id}/comments`, grace)
    t.same(comment.response.json(), comments.data[0], 'the comment as its list gives it')
    t.same(
      await eventPayload('comment.added'),
      { commentId: comment.response.json().id, articleId: answers.article!.id, authorId: 2, comment: comment.response.json() },
      'its event carries it',
    )
  },
)

t.test('a keyed refusal of a user, a product or a comment is stored by a second statement and replays in one', async (t) => {
  const database = await createTestDatabase(t)
  const app = await build(t, { database, env: { EVENTS_RELAY: 'false' } })
  const driver = watchDriverStatements(database)
  const refusals = [
    { url: '/api/v1/users', headers: ada, payload: { name: 'Nobody', company_id: 9 }, status: 422, code: 'UNKNOWN_COMPANY' },
    { url: '/api/v1/products', headers: ada, payload: { sku: 'KB-101', name: 'Taken', price: 1 }, status: 409, code: 'PRODUCT_EXISTS' },
    { url: '/api/v1/articles/999999/comments', headers: grace, payload: { body: 'Lost.' }, status: 404, code: 'NOT_FOUND' },
  ]
  for (const [index, refusal] of refusals.entries()) {
    const send = () =>
      driver.during(() =>
        app.inject({
          method: 'POST',
          url: refusal.url,
          headers: { ...refusal.headers, 'idempotency-key': `refused-${index}` },
          payload: refusal.payload,
        }),
      )
    const first = await send()
    t.equal(first.result.statusCode, refusal.status, refusal.code)
    t.equal(first.result.json().code, refusal.code)
    t.equal(first.statements.length, 2, `${refusal.code}: found, then stored`, { statements: first.statements })
    t.same(transactionControl(first.statements), [])
    const replayed = await send()
    t.equal(replayed.result.statusCode, refusal.status)
    t.equal(replayed.result.headers['idempotent-replayed'], 'true', `${refusal.code}: the stored refusal replays`)
    t.equal(replayed.statements.length, 1, `${refusal.code}: the replay is one statement`)
  }
})

t.test('the second statement stores a refusal only while it holds the key and finds no outcome', async (t) => {
  const { db, url } = await createTestDatabase(t)
  const refusal = { status: 422, body: { __error: { status: 422, code: 'UNKNOWN_SKU', detail: 'refused', headers: {} } }, ttlSeconds: 60 }
  const stored = async (key: string) =>
    (
      await db.selectFrom('idempotency_keys').select(['request_hash', 'status']).where('caller', '=', '1').where('key', '=', key).execute()
    ).map((row) => [row.request_hash, row.status])
  const request = (key: string, requestHash = 'refused') => ({ caller: '1', key, requestHash })

  t.same(await storeOutcomeIfClaimed(db, request('free'), refusal), { locked: true, stored: undefined }, 'a free key: claimed')
  t.same(await stored('free'), [['refused', 422]], 'and the refusal stored')

  await db
    .insertInto('idempotency_keys')
    .values({
      caller: '1',
      key: 'taken',
      request_hash: 'created',
      status: 201,
      body: JSON.stringify({ id: 1 }),
      expires_at: new Date(Date.now() + 60_000),
    })
    .execute()
  const taken = await storeOutcomeIfClaimed(db, request('taken'), refusal)
  t.match(taken, { stored: { requestHash: 'created', status: 201 } }, 'a key another request finished: its outcome is answered')
  t.same(await stored('taken'), [['created', 201]], 'and never overwritten')

  await db
    .insertInto('idempotency_keys')
    .values({ caller: '1', key: 'expired', request_hash: 'old', status: 201, body: '{}', expires_at: new Date(Date.now() - 1000) })
    .execute()
  t.same(
    await storeOutcomeIfClaimed(db, request('expired'), refusal),
    { locked: true, stored: undefined },
    'an expired outcome is no outcome',
  )
  t.same(await stored('expired'), [['refused', 422]], 'it is replaced')

  if (!postgresUrl()) return
  // Another request holds the key (a first request running): nothing is stored, the caller answers 409.
  const holder = new pg.Client({ connectionString: url })
  await holder.connect()
  t.teardown(() => holder.end())
  await holder.query('begin')
  await holder.query(`select pg_advisory_xact_lock(hashtextextended('1:held', 7))`)
  t.same(await storeOutcomeIfClaimed(db, request('held'), refusal), { locked: false, stored: undefined }, 'a key held by another request')
  t.same(await stored('held'), [], 'stores nothing')
  await holder.query('rollback')
})
