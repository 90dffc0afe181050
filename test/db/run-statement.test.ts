/**
 * A fixed statement run on the app's database itself takes the short path below Kysely's executor
 * (DatabaseHandle.runStatement, decisions §19) on PostgreSQL, and Kysely's path in a transaction,
 * on PGlite and through replicas. Either way it answers the same rows, is written to the statement
 * log (what metrics, traces and a request's statement count read), and on PostgreSQL keeps the
 * statement timeout of every unit of work.
 */
import t from 'tap'
import type { LogEvent } from 'kysely'
import { compiledStatement, type RunStatement, type StatementTarget } from '../../src/db/compiled-statement.ts'
import type { DatabaseHandle } from '../../src/db/database.ts'
import { createTestDatabase } from '../helper.ts'

/** The database's target, counting the statements that took the short path. */
function countingTarget({ db, runStatement }: DatabaseHandle): StatementTarget & { shortRuns: number } {
  const target: StatementTarget & { shortRuns: number } = { db, run: undefined, shortRuns: 0 }
  if (runStatement) {
    const run: RunStatement = (query) => {
      target.shortRuns++
      return runStatement(query)
    }
    target.run = run
  }
  return target
}

const priceOf = 'select price from products where sku = $1'

t.test('a fixed statement on the database answers as through Kysely, and the statement log sees it', async (t) => {
  const database = await createTestDatabase(t)
  const { db, runStatement } = database
  t.equal(runStatement === undefined, database.kind === 'pglite', 'the short path exists on PostgreSQL only')
  const events: LogEvent[] = []
  t.teardown(database.observeQueries((event) => events.push(event)))
  const [product] = await db.selectFrom('products').select(['sku', 'price']).orderBy('sku').limit(1).execute()
  if (!product) throw new Error('the demo data has products')
  events.length = 0

  const target = countingTarget(database)
  const price = compiledStatement<{ price: number }>(priceOf, target)
  t.same(await price(db, [product.sku]), [{ price: product.price }])
  t.equal(target.shortRuns, runStatement ? 1 : 0, 'by the short path where there is one')
  t.equal(events.length, 1, 'one statement logged')
  t.equal(events[0]?.level, 'query')
  t.equal(events[0]?.query.sql, priceOf)
  t.same(events[0]?.query.parameters, [product.sku])
  t.ok((events[0]?.queryDurationMillis ?? -1) >= 0, 'timed')

  events.length = 0
  const quotient = compiledStatement<{ q: number }>('select 1 / $1::int as q', { db, run: runStatement })
  await t.rejects(quotient(db, [0]), { code: '22012' }, 'a failing statement fails the caller')
  t.equal(events.length, 1)
  t.equal(events[0]?.level, 'error', 'and is logged as an error')
})

t.test('in a transaction the statement runs on the transaction, seeing its uncommitted writes', async (t) => {
  const database = await createTestDatabase(t)
  const { db } = database
  const target = countingTarget(database)
  const price = compiledStatement<{ price: number }>(priceOf, target)
  const inside = await db.transaction().execute(async (trx) => {
    await trx.insertInto('products').values({ sku: 'RUN-STATEMENT-1', name: 'Uncommitted', price: 4321 }).execute()
    const seen = await price(trx, ['RUN-STATEMENT-1'])
    await trx.deleteFrom('products').where('sku', '=', 'RUN-STATEMENT-1').execute()
    return seen
  })
  t.same(inside, [{ price: 4321 }], 'the transaction saw its own insert')
  t.equal(target.shortRuns, 0, 'through the transaction, not the short path')
  t.same(await price(db, ['RUN-STATEMENT-1']), [], 'and the database, after, the delete')
})

t.test('PostgreSQL: the short path keeps the statement timeout and gives the connection back', async (t) => {
  const database = await createTestDatabase(t, { statementTimeoutMs: 300, poolSize: 1 })
  const { db, runStatement } = database
  if (!runStatement) {
    t.pass('PGlite runs no statement timeout (docs/decisions.md §12)')
    return
  }
  const sleep = compiledStatement<{ slept: string }>('select pg_sleep($1)::text as slept', { db, run: runStatement })
  await t.rejects(sleep(db, [2]), { code: '57014' }, 'cancelled by the server at the statement timeout')
  // One connection in the pool: had the cancelled run kept it, this would wait for a connection and fail.
  t.same(await sleep(db, [0]), [{ slept: '' }], 'the next run gets the connection')
})
