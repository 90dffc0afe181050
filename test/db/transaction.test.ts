/**
 * A write's transaction has one owner, the service, and what must follow its commit runs after the
 * commit only (src/db/write.ts): never before it, never for a write rolled back,
 * refused or replayed.
 */
import t from 'tap'
import { sql } from 'kysely'
import { runWrite } from '../../src/db/write.ts'
import { ApiError, conflict } from '../../src/errors.ts'
import { bearer, build, createTestDatabase, gql } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'

const onPostgres = postgresUrl() !== undefined

/** The advisory lock a test holds to keep a write waiting at its commit. */
const HOLD_LOCK = 74_202

/** Counts the committed products with this sku, on a connection of the test's own. */
const countProducts = async (db: Parameters<typeof runWrite>[0], sku: string) =>
  Number(
    (
      await db
        .selectFrom('products')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('sku', '=', sku)
        .executeTakeFirstOrThrow()
    ).n,
  )

t.test('effects run after the commit, when the written rows are visible to everyone', async (t) => {
  const { db } = await createTestDatabase(t)
  const seen: number[] = []
  const written = await runWrite(db, undefined, {
    check: async () => {},
    async write({ trx, afterCommit }) {
      await trx.insertInto('products').values({ sku: 'TX-001', name: 'Committed', price: 100 }).execute()
      afterCommit(async () => void seen.push(await countProducts(db, 'TX-001')))
      return 'done'
    },
  })
  t.same(written, { value: 'done', replayed: false })
  t.same(seen, [1], 'the effect ran once, and saw the committed row')
})

t.test('a rolled-back write runs no effect', async (t) => {
  const { db } = await createTestDatabase(t)
  let ran = 0
  // A refusal only a change discovers: the work says its write may refuse.
  const failed = runWrite(db, undefined, {
    check: async () => {},
    async write({ trx, afterCommit }) {
      await trx.insertInto('products').values({ sku: 'TX-002', name: 'Rolled back', price: 100 }).execute()
      afterCommit(async () => void ran++)
      throw conflict('PRODUCT_EXISTS', 'refused after the insert')
    },
    writeMayRefuse: true,
  })
  await t.rejects(failed, ApiError)
  t.equal(ran, 0)
  t.equal(await countProducts(db, 'TX-002'), 0, 'and nothing was written')
})

t.test('an idempotent write: effects after its commit, none for a refused attempt, none for a replay', async (t) => {
  const { db } = await createTestDatabase(t)
  let ran = 0
  const claim = (key: string) => ({ caller: '1', key, fingerprint: { test: key }, answer: () => ({ status: 201 }) })
  const create = (key: string, sku: string) =>
    runWrite(db, claim(key), {
      check: async () => {},
      async write({ trx, afterCommit }) {
        await trx.insertInto('products').values({ sku, name: 'Idempotent', price: 100 }).execute()
        afterCommit(async () => void ran++)
        return { sku }
      },
    })

  t.same(await create('k-1', 'TX-003'), { value: { sku: 'TX-003' }, replayed: false })
  t.equal(ran, 1)
  t.same(await create('k-1', 'TX-003'), { value: { sku: 'TX-003' }, replayed: true }, 'the same key replays')
  t.equal(ran, 1, 'a replay changes nothing, so it has no effect to run')

  const refused = runWrite(db, claim('k-2'), {
    check: async () => {},
    async write({ trx, afterCommit }) {
      await trx.insertInto('products').values({ sku: 'TX-004', name: 'Refused', price: 100 }).execute()
      afterCommit(async () => void ran++)
      throw conflict('PRODUCT_EXISTS', 'refused after the insert')
    },
    writeMayRefuse: true,
  })
  await t.rejects(refused, ApiError)
  t.equal(ran, 1, 'a refused attempt (its outcome stored, its writes rolled back) has no effect')
  t.equal(await countProducts(db, 'TX-004'), 0)
})

t.test(
  'the GraphQL cache is not re-filled with stale data while an idempotent write commits',
  { skip: onPostgres ? false : 'PGlite runs one statement at a time, so no read can run while a write waits at its commit' },
  async (t) => {
    const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
    const grace = bearer(2, 'articles:write')
    const query = '{ articles(first: 5) { id title } }'
    const titles = async () =>
      (
        (await gql(app, query, grace)).json().data.articles as Array<{
          title: string
        }>
      ).map((a) => a.title)
    t.notOk((await titles()).includes('Fresh'), 'the list is cached before the write')

    // A deferred trigger holds the write at its commit (after the article and the stored outcome
    // are written) until the test releases an advisory lock: the window in which an invalidation
    // made too early lets a concurrent read cache the old list again.
    const holder = app.db
    await sql`create function hold_commit() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock(${sql.lit(HOLD_LOCK)}); return null; end $$`.execute(holder)
    await sql`create constraint trigger hold_commit after insert on idempotency_keys deferrable initially deferred
      for each row execute function hold_commit()`.execute(holder)
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let lockTaken!: () => void
    const locked = new Promise<void>((resolve) => (lockTaken = resolve))
    const holding = holder.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(${HOLD_LOCK})`.execute(connection)
      lockTaken()
      await released
      await sql`select pg_advisory_unlock(${HOLD_LOCK})`.execute(connection)
    })
    await locked

    const created = app.inject({
      method: 'POST',
      url: '/api/v1/articles',
      headers: { ...grace, 'idempotency-key': 'stale-cache-1' },
      payload: { title: 'Fresh', body: 'News' },
    })
    const waiting = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`.execute(holder))
        .rows[0]!.n
    for (let tries = 0; (await waiting()) === 0; tries++) {
      if (tries > 500) throw new Error('the write never reached its commit')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    t.notOk((await titles()).includes('Fresh'), 'a read while the write commits sees the old list')

    release()
    await holding
    t.equal((await created).statusCode, 201)
    t.ok((await titles()).includes('Fresh'), 'the read after the commit sees the new article, not a stale cache entry')
  },
)
