/**
 * The idempotency protocol's two shortcuts (src/db/write.ts): the key's lock and its stored
 * outcome read in one round trip, safely; and work (src/db/write.ts), whose
 * refusals all come before its changes, run without a savepoint.
 */
import t from 'tap'
import { sql } from 'kysely'
import pg from 'pg'
import { runWrite } from '../../src/db/write.ts'
import { ApiError, conflict } from '../../src/errors.ts'
import { createTestDatabase } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'

const onPostgres = postgresUrl() !== undefined

const claim = (key: string) => ({ caller: '1', key, fingerprint: { test: key }, answer: () => ({ status: 201 }) })

/** The skus of committed products named `sku` (none or one). */
const productsNamed = async (db: Parameters<typeof runWrite>[0], sku: string) =>
  (await db.selectFrom('products').select('sku').where('sku', '=', sku).execute()).map((row) => row.sku)

const storedKeys = async (db: Parameters<typeof runWrite>[0], key: string) =>
  (await db.selectFrom('idempotency_keys').select('status').where('key', '=', key).execute()).map((row) => row.status)

t.test(
  'the claim sees an outcome committed after its statement began, once it holds the lock',
  { skip: onPostgres ? false : 'PGlite runs one session: no other transaction can commit during a statement' },
  async (t) => {
    const { db, url } = await createTestDatabase(t)
    // A holder of the key: its lock taken, its outcome written, not yet committed.
    const holder = new pg.Client({ connectionString: url })
    await holder.connect()
    t.teardown(() => holder.end())
    await holder.query('begin')
    await holder.query(`select pg_advisory_xact_lock(hashtextextended('1:late', 7))`)
    await holder.query(
      `insert into idempotency_keys (caller, key, request_hash, status, body, expires_at)
       values ('1', 'late', 'h', 201, '{}', now() + interval '1 hour')`,
    )
    // The claim's statement starts (its snapshot taken) while the holder runs; the holder commits
    // during the statement's first second, before the claim's function takes the lock.
    const claiming = sql<{ locked: boolean; status: number | null }>`
      select claim.locked, claim.status from (select pg_sleep(1)) as wait, lateral idempotency_claim('1', 'late') as claim`.execute(db)
    await new Promise((resolve) => setTimeout(resolve, 300))
    await holder.query('commit')
    const { rows } = await claiming
    t.same(rows, [{ locked: true, status: 201 }], 'locked, and the stored outcome is seen')
  },
)

t.test('checked work: a refusal from its check is stored and replayed, with nothing written', async (t) => {
  const { db } = await createTestDatabase(t)
  let checks = 0
  const refuse = () =>
    runWrite(db, claim('checked-1'), {
      async check() {
        checks++
        throw conflict('PRODUCT_EXISTS', 'refused by the check')
      },
      async write({ trx }) {
        await trx.insertInto('products').values({ sku: 'CK-001', name: 'Never', price: 100 }).execute()
        return 'written'
      },
    })
  await t.rejects(refuse(), { code: 'PRODUCT_EXISTS' })
  t.same(await storedKeys(db, 'checked-1'), [409], 'the refusal is stored')
  const replayed = await refuse().catch((error: unknown) => error)
  t.ok(replayed instanceof ApiError && replayed.headers['idempotent-replayed'] === 'true', 'and replayed')
  t.equal(checks, 1, 'the replay ran nothing')
  t.same(await productsNamed(db, 'CK-001'), [], 'nothing written')
})

t.test('checked work: a refusal from its write fails as a bug, rolled back and not stored', async (t) => {
  const { db } = await createTestDatabase(t)
  const refusedLate = runWrite(db, claim('checked-2'), {
    async check() {
      return 'checked'
    },
    async write({ trx }) {
      await trx.insertInto('products').values({ sku: 'CK-002', name: 'Partial', price: 100 }).execute()
      throw conflict('PRODUCT_EXISTS', 'refused after a change')
    },
  })
  const error = await refusedLate.catch((failure: unknown) => failure)
  t.ok(error instanceof Error && !(error instanceof ApiError), 'an internal error (500), not the refusal')
  t.same(await productsNamed(db, 'CK-002'), [], 'its change rolled back')
  t.same(await storedKeys(db, 'checked-2'), [], 'no outcome stored, so a retry runs again')
})
