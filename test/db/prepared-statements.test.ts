/**
 * Prepared statements on a direct PostgreSQL connection (src/db/prepared-statements.ts): a
 * statement with parameters is prepared once per connection and run by name after that; none is
 * prepared behind a pooler; and a migration that changes the columns behind a prepared `*`
 * neither breaks a read (run again unnamed) nor leaves a connection with stale plans (a write in a
 * transaction fails once as retryable, the next attempt succeeds).
 */
import t from 'tap'
import { sql } from 'kysely'
import { isDatabaseUnavailable, PreparedStatementInvalidated } from '../../src/db/database-unavailable.ts'
import { createTestDatabase } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'

const skip = postgresUrl() ? false : 'PGlite runs in this process: it prepares nothing'

/** The statements prepared on the connection this runs on (the catalogue is per session). */
function preparedHere() {
  return sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`
}

t.test('a statement with parameters is prepared once per connection, then run by name', { skip }, async (t) => {
  const { db } = await createTestDatabase(t, { pooled: false, poolSize: 1 })
  const productBySku = (sku: string) => db.selectFrom('products').select(['sku', 'price']).where('sku', '=', sku).executeTakeFirst()
  t.equal((await productBySku('KB-101'))?.sku, 'KB-101')
  t.equal((await productBySku('MS-202'))?.sku, 'MS-202', 'each run binds its own value')
  const prepared = (await preparedHere().execute(db)).rows
  const mine = prepared.filter((row) => row.statement.includes('from "products"'))
  t.equal(mine.length, 1, 'one prepared statement for the one text')
  t.match(mine[0]?.name, /^api_\d+$/)
  t.notOk(
    prepared.some((row) => row.statement.includes('pg_prepared_statements')),
    'a statement without parameters goes as a simple query, unprepared',
  )
})

t.test('behind a pooler in transaction mode nothing is prepared', { skip }, async (t) => {
  const { db } = await createTestDatabase(t, { pooled: true, poolSize: 1 })
  await db.selectFrom('products').select('sku').where('sku', '=', 'KB-101').executeTakeFirst()
  await db.transaction().execute((trx) => trx.selectFrom('products').select('sku').where('price', '>', 0).execute())
  t.same((await preparedHere().execute(db)).rows, [], 'no named statement on the session')
})

t.test('a migration that changes the columns behind a prepared statement', { skip }, async (t) => {
  const { db } = await createTestDatabase(t, { pooled: false, poolSize: 1 })
  await sql`create table gadgets (id int primary key, name text not null)`.execute(db)
  await sql`insert into gadgets values (1, 'one'), (2, 'two')`.execute(db)
  // A table of the test's own, with the columns a migration will add.
  const gadgets = db.withTables<{ gadgets: { id: number; name: string; colour: string; size: number | null } }>()
  const gadget = (executor: typeof gadgets, id: number) =>
    executor.selectFrom('gadgets').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  t.same(await gadget(gadgets, 1), { id: 1, name: 'one' }, 'prepared on the first run')

  // What another instance's migration does during a rolling deploy.
  await sql`alter table gadgets add column colour text not null default 'grey'`.execute(db)
  t.same(await gadget(gadgets, 2), { id: 2, name: 'two', colour: 'grey' }, 'a read outside a transaction answers, with the new column')
  t.same(await gadget(gadgets, 1), { id: 1, name: 'one', colour: 'grey' }, 'and the next one too (the stale connection was replaced)')

  await sql`alter table gadgets add column size int`.execute(db)
  const refused = await gadgets
    .transaction()
    .execute((trx) => gadget(trx, 1))
    .then(
      () => undefined,
      (error: unknown) => error,
    )
  t.ok(refused instanceof PreparedStatementInvalidated, 'in a transaction the statement fails, as retryable')
  t.ok(isDatabaseUnavailable(refused), 'which the API answers 503 with Retry-After')
  t.same(
    await gadgets.transaction().execute((trx) => gadget(trx, 1)),
    { id: 1, name: 'one', colour: 'grey', size: null },
    'the retry runs on a fresh connection',
  )
})
