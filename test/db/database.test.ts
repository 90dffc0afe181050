import t from 'tap'
import { sql } from 'kysely'
import { randomBytes } from 'node:crypto'
import { createDatabase, migrateToLatest } from '../../src/db/database.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { seedDemoData } from '../../src/db/seed.ts'
import { createTestDatabase } from '../helper.ts'
import { createServerDatabase, dropServerDatabase, postgresUrl } from '../setup/templates.ts'

t.test('the template database is migrated and holds the demo data set', async (t) => {
  const { db } = await createTestDatabase(t)
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = 'public' order by table_name`.execute(db)
  const names = tables.rows.map((row) => row.table_name)
  for (const table of ['articles', 'comments', 'companies', 'idempotency_keys', 'order_items', 'orders', 'outbox', 'products', 'users']) {
    t.ok(names.includes(table), `${table} exists`)
  }
  const users = await db.selectFrom('users').select(['id', 'name']).orderBy('id').execute()
  t.same(
    users.map((user) => user.name),
    ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson'],
  )
  const orders = await db.selectFrom('orders').selectAll().orderBy('id').execute()
  t.ok(orders.length >= 5)
  t.equal(typeof orders[0]!.total, 'number', 'bigint totals come back as numbers')
  t.ok(orders[0]!.created_at instanceof Date)
})

t.test('seeding is a no-op on a database that already has data', async (t) => {
  const { db } = await createTestDatabase(t)
  const before = await db.selectFrom('orders').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
  t.equal(await seedDemoData(db), false)
  const after = await db.selectFrom('orders').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
  t.equal(after.n, before.n)
})

t.test('order totals in the demo data equal the sum of qty × unit_price', async (t) => {
  const { db } = await createTestDatabase(t)
  const rows = await db
    .selectFrom('orders')
    .innerJoin('order_items', 'order_items.order_id', 'orders.id')
    .select(['orders.id', 'orders.total', sql<number>`sum(order_items.qty * order_items.unit_price)`.as('computed')])
    .groupBy(['orders.id', 'orders.total'])
    .execute()
  for (const row of rows) t.equal(Number(row.computed), row.total, `order ${row.id}`)
})

t.test('timestamps keep millisecond precision, no more', async (t) => {
  const { db } = await createTestDatabase(t)
  const { id } = await db.insertInto('companies').values({ name: 'Precise' }).returning('id').executeTakeFirstOrThrow()
  t.ok(id > 0)
  const row = await sql<{ at: Date }>`select '2026-03-04T05:06:07.123456Z'::timestamptz(3) as at`.execute(db)
  t.equal(row.rows[0]!.at.toISOString(), '2026-03-04T05:06:07.123Z')
})

t.test('several instances migrating an empty database at once migrate it exactly once', async (t) => {
  const url = postgresUrl()
  if (!url) {
    // One PGlite is one process: concurrent migrators on it are serialized by its single connection.
    const handle = await createDatabase({ url: 'memory://' })
    t.teardown(() => handle.close())
    await Promise.all([migrateToLatest(handle.db), migrateToLatest(handle.db), migrateToLatest(handle.db)])
    const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(handle.db)
    t.equal(applied.rows.length, Object.keys(migrations).length, 'each migration applied once')
    return
  }
  const name = `migrate_race_${randomBytes(4).toString('hex')}`
  const databaseUrl = await createServerDatabase(url, name)
  const handles = await Promise.all([1, 2, 3].map(() => createDatabase({ url: databaseUrl, poolSize: 2 })))
  t.teardown(async () => {
    await Promise.all(handles.map((handle) => handle.close()))
    await dropServerDatabase(url, name)
  })
  await Promise.all(handles.map((handle) => migrateToLatest(handle.db)))
  const seeded = await Promise.all(handles.map((handle) => seedDemoData(handle.db)))
  t.same(seeded.filter(Boolean).length, 1, 'exactly one instance loads the demo data')
  const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(handles[0]!.db)
  t.equal(applied.rows.length, Object.keys(migrations).length, 'each migration applied once')
  const users = await handles[0]!.db.selectFrom('users').select('id').execute()
  t.equal(users.length, 4)
})

t.test('the connection mode: direct runs a read as one statement under the session’s timeout; pooled sets it per read', async (t) => {
  const postgres = postgresUrl()
  if (!postgres) {
    const handle = await createTestDatabase(t)
    t.equal(handle.pooled, false, 'PGlite is never pooled')
    return
  }
  // What the server sees while the read runs: the timeout in force, the session's own default
  // (a startup parameter sets it; SET LOCAL does not), and whether the read began its transaction
  // (a statement alone) or a BEGIN sent before it did.
  const read = sql<{ setting: string; reset_val: string; alone: boolean }>`
    select setting, reset_val, now() = statement_timestamp() as alone from pg_settings where name = 'statement_timeout'`
  const counted = async (pooled: boolean | undefined) => {
    const statements: string[] = []
    const handle = await createTestDatabase(t, {
      statementTimeoutMs: 1234,
      onQuery: (event) => statements.push(event.query.sql),
      ...(pooled === undefined ? {} : { pooled }),
    })
    const { rows } = await read.execute(handle.db)
    return { pooled: handle.pooled, statements, seen: rows[0]! }
  }

  const direct = await counted(undefined)
  t.equal(direct.pooled, false, 'PostgreSQL itself: found to be direct')
  t.equal(direct.statements.length, 1, 'one statement through Kysely')
  t.same(direct.seen, { setting: '1234', reset_val: '1234', alone: true }, 'the session’s timeout, and the read is the whole transaction')

  const forced = await counted(true)
  t.equal(forced.pooled, true, 'DB_POOLED=true forces pooled on a direct connection')
  t.same(
    forced.seen,
    { setting: '1234', reset_val: '0', alone: false },
    'the timeout is SET LOCAL in a transaction a BEGIN opened before the read; the session keeps the default',
  )
})
