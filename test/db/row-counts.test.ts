/**
 * Exact totals from the counts PostgreSQL keeps where rows change (decisions §17, migration 0009):
 * whatever writes the rows (the service's REST and GraphQL writes, or SQL of anyone's, in
 * transactions that run side by side on several connections, commit or roll back, change one row
 * or many), every total the counts give equals count(*) of the same filter afterwards, and so does
 * every `page.total` and `totalCount` the service answers. The migration counts what a database
 * already holds, and recount_rows() counts again after a load that bypassed the triggers.
 */
import t from 'tap'
import { type Kysely, sql } from 'kysely'
import { Migrator } from 'kysely/migration'
import { migrateToLatest } from '../../src/db/database.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import type { Database } from '../../src/db/schema.ts'
import { bearer, build, createEmptyDatabase, createTestDatabase, gql } from '../helper.ts'

const STATUSES = ['pending', 'paid', 'cancelled', 'refunded'] as const

/** Every total the counts give, beside count(*) of the same rows; each pair must be equal. */
async function countsAgainstRows(db: Kysely<Database>) {
  const { rows } = await sql<{ what: string; counted: string; counted_rows: string }>`
    with kept as (select counted, owner_id, status, sum(n) as n from row_counts group by counted, owner_id, status),
    filters as (
      select 'orders' as counted, 0 as owner_id, null::text as status, (select count(*) from orders) as counted_rows
      union all select 'orders', 0, s, (select count(*) from orders where status = s) from unnest(${[...STATUSES]}::text[]) as s
      union all select 'orders', u, null, (select count(*) from orders where user_id = u) from (select distinct user_id as u from orders) as o
      union all select 'orders', o.user_id, o.status, count(*) from orders as o group by o.user_id, o.status
      union all select 'webhook_endpoints', 0, null, (select count(*) from webhook_endpoints)
      union all select 'webhook_endpoints', e.owner_id, null, count(*) from webhook_endpoints as e group by e.owner_id
      union all select 'users', 0, null, (select count(*) from users)
      union all select 'articles', 0, null, (select count(*) from articles)
      union all select 'products', 0, null, (select count(*) from products)
    )
    select f.counted || '/' || f.owner_id || '/' || coalesce(f.status, '*') as what,
      (select coalesce(sum(k.n), 0) from kept as k
        where k.counted = f.counted and k.owner_id = f.owner_id and (f.status is null or k.status = f.status))::text as counted,
      f.counted_rows::text as counted_rows
    from filters as f order by what`.execute(db)
  // Counts of owners and statuses with no rows left must be zero, not missing from the sums above.
  const { rows: stale } = await sql<{ what: string; n: string }>`
    select k.counted || '/' || k.owner_id || '/' || k.status as what, sum(k.n)::text as n from row_counts as k
    where k.owner_id <> 0 and not exists (
      select from orders as o where k.counted = 'orders' and o.user_id = k.owner_id and o.status = k.status)
      and not exists (select from webhook_endpoints as e where k.counted = 'webhook_endpoints' and e.owner_id = k.owner_id)
    group by k.counted, k.owner_id, k.status having sum(k.n) <> 0`.execute(db)
  return { pairs: rows, stale }
}

function assertExact(
  t: { same(found: unknown, wanted: unknown, message: string): void },
  result: Awaited<ReturnType<typeof countsAgainstRows>>,
): void {
  const wrong = result.pairs.filter((pair) => pair.counted !== pair.counted_rows)
  t.same(wrong, [], `every one of ${result.pairs.length} totals equals count(*) of its rows`)
  t.same(result.stale, [], 'no count is left for rows that are gone')
}

t.test('the migration counts what the database holds', async (t) => {
  const { db } = await createEmptyDatabase(t)
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  t.equal((await migrator.migrateTo('0008-event-stream-tickets')).error, undefined)
  await sql`insert into users (id, name) select g, 'User ' || g from generate_series(1, 30) as g`.execute(db)
  await sql`insert into articles (author_id, title, body) select 1 + g % 30, 'A' || g, 'B' from generate_series(1, 7) as g`.execute(db)
  await sql`insert into products (sku, name, price) values ('P-1', 'One', 100), ('P-2', 'Two', 200)`.execute(db)
  await sql`
    insert into orders (user_id, status, total)
    select 1 + g % 30, (array['pending', 'paid', 'cancelled', 'refunded'])[1 + g % 4], g from generate_series(1, 500) as g`.execute(db)
  await sql`
    insert into webhook_endpoints (owner_id, owner_admin, owner_scopes, url, secret, after_seq)
    select 1 + g % 3, false, '{}', 'https://example.com/' || g, 'whsec_x', 0 from generate_series(1, 5) as g`.execute(db)
  await migrateToLatest(db)
  assertExact(t, await countsAgainstRows(db))

  // A load that bypasses the triggers leaves the counts behind; recount_rows() counts again.
  await db.connection().execute(async (session) => {
    await sql`set session_replication_role = replica`.execute(session)
    await sql`insert into orders (user_id, status, total) select 1 + g % 30, 'paid', g from generate_series(1, 40) as g`.execute(session)
    await sql`delete from articles where id = (select min(id) from articles)`.execute(session)
    await sql`set session_replication_role = origin`.execute(session)
  })
  t.not(
    (await countsAgainstRows(db)).pairs.filter((pair) => pair.counted !== pair.counted_rows).length,
    0,
    'a load without triggers is not counted',
  )
  await sql`select recount_rows()`.execute(db)
  assertExact(t, await countsAgainstRows(db))
})

/** A small deterministic random source, so that a failure can be run again as it was. */
function randomSource(seed: number): (below: number) => number {
  let state = seed
  return (below) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    return state % below
  }
}

/** Errors two writers can rightly meet when they run side by side; the transaction is then undone. */
const RACES = new Set(['40P01', '40001', '23503'])

t.test('writes side by side, on several connections, through the service and in SQL, leave every total exact', async (t) => {
  const database = await createTestDatabase(t, { poolSize: 6 })
  const app = await build(t, { database })
  const db = database.db
  await sql`insert into users (name) select 'Writer ' || g from generate_series(1, 12) as g`.execute(db)
  const users = (await sql<{ id: number }>`select id from users order by id`.execute(db)).rows.map((row) => row.id)
  let raced = 0

  /** One writer of SQL: transactions of one to four statements, each changing one row or many, some rolled back. */
  async function sqlWriter(seed: number): Promise<void> {
    const random = randomSource(seed)
    const pick = <T>(list: readonly T[]): T => list[random(list.length)]!
    for (let round = 0; round < 25; round++) {
      try {
        await db.transaction().execute(async (trx) => {
          for (let step = random(4); step >= 0; step--) {
            switch (random(8)) {
              case 0:
              case 1:
                await sql`insert into orders (user_id, status, total)
                  select ${pick(users)}, ${pick(STATUSES)}, g from generate_series(1, ${1 + random(3)}) as g`.execute(trx)
                break
              case 2:
                await sql`update orders set status = ${pick(STATUSES)}
                  where id in (select id from orders where user_id = ${pick(users)} order by id limit ${1 + random(4)})`.execute(trx)
                break
              case 3:
                await sql`update orders set user_id = ${pick(users)} where id = (select max(id) - ${random(20)} from orders)`.execute(trx)
                break
              case 4:
                await sql`delete from orders where id in (select id from orders where status in ('pending', 'cancelled')
                  order by id desc limit ${1 + random(3)})`.execute(trx)
                break
              case 5:
                await sql`insert into articles (author_id, title, body) values (${pick(users)}, 'Title', 'Body')`.execute(trx)
                await sql`delete from articles where id = (select min(id) from articles where title = 'Title')`.execute(trx)
                break
              case 6:
                await sql`insert into webhook_endpoints (owner_id, owner_admin, owner_scopes, url, secret, after_seq)
                  values (${pick(users)}, false, '{}', 'https://example.com/hook', 'whsec_x', 0)`.execute(trx)
                await sql`update webhook_endpoints set owner_id = ${pick(users)} where id = (select max(id) from webhook_endpoints)`.execute(
                  trx,
                )
                break
              default:
                await sql`delete from webhook_endpoints where id = (select min(id) from webhook_endpoints)`.execute(trx)
            }
          }
          if (random(5) === 0) throw new RolledBack()
        })
      } catch (error) {
        if (error instanceof RolledBack) continue
        const code = (error as { code?: string }).code
        if (code && RACES.has(code)) {
          raced++
          continue
        }
        throw error
      }
    }
  }

  /** One writer through the service: creates, transitions and deletes of one user's orders, over REST and GraphQL. */
  async function serviceWriter(userId: number): Promise<void> {
    const headers = { ...bearer(userId, 'orders:read orders:write'), 'content-type': 'application/json' }
    for (let round = 0; round < 6; round++) {
      const created = await app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...headers, 'idempotency-key': `counts-${userId}-${round}` },
        payload: { items: [{ sku: 'KB-101', qty: 1 }] },
      })
      t.equal(created.statusCode, 201, 'created')
      const id = created.json<{ id: number }>().id
      if (round % 3 === 0) {
        t.equal((await app.inject({ method: 'POST', url: `/api/v1/orders/${id}/payment`, headers })).statusCode, 200, 'paid')
      } else if (round % 3 === 1) {
        t.equal((await app.inject({ method: 'POST', url: `/api/v1/orders/${id}/cancellation`, headers })).statusCode, 200, 'cancelled')
        t.equal((await app.inject({ method: 'DELETE', url: `/api/v1/orders/${id}`, headers })).statusCode, 204, 'deleted')
      } else {
        const paid = await gql(app, `mutation { payOrder(id: "${id}") { status } }`, bearer(userId, 'orders:read orders:write'))
        t.same(paid.json().errors, undefined, 'paid over GraphQL')
      }
    }
  }

  await Promise.all([...[1, 2, 3, 4].map((seed) => sqlWriter(seed)), ...users.slice(-4).map((userId) => serviceWriter(userId))])
  t.comment(`${raced} transactions met a deadlock or a deleted row and were undone, as concurrent writers may`)
  assertExact(t, await countsAgainstRows(db))

  // What the service answers for every filter is the same count.
  const admin = bearer(1, 'admin')
  const count = async (where: string) =>
    Number((await sql.raw<{ n: string }>(`select count(*) as n from orders ${where}`).execute(db)).rows[0]!.n)
  for (const [query, where] of [
    ['', ''],
    ...STATUSES.map((status) => [`status=${status}`, `where status = '${status}'`]),
    [`user_id=${users.at(-1)}`, `where user_id = ${users.at(-1)}`],
    [`user_id=${users.at(-1)}&status=paid`, `where user_id = ${users.at(-1)} and status = 'paid'`],
  ] as const) {
    const page = await app.inject({ method: 'GET', url: `/api/v1/orders?${query}`, headers: admin })
    t.equal(page.json<{ page: { total: number } }>().page.total, await count(where), `GET /orders?${query}: page.total`)
  }
  const own = await app.inject({ method: 'GET', url: '/api/v1/orders?status=paid', headers: bearer(users.at(-1)!, 'orders:read') })
  t.equal(
    own.json<{ page: { total: number } }>().page.total,
    await count(`where user_id = ${users.at(-1)} and status = 'paid'`),
    "the caller's own paid orders",
  )
  const connection = await gql(app, '{ ordersConnection(first: 1, status: paid) { totalCount } }', admin)
  t.equal(
    connection.json<{ data: { ordersConnection: { totalCount: number } } }>().data.ordersConnection.totalCount,
    await count(`where status = 'paid'`),
    'totalCount',
  )
})

class RolledBack extends Error {}

t.test(
  "a writer never waits for another's commit on a count",
  { skip: process.env.DATABASE_URL ? false : 'PGlite runs one transaction at a time' },
  async (t) => {
    const database = await createTestDatabase(t, { poolSize: 3 })
    const db = database.db
    await db.connection().execute(async (held) => {
      // Grace's new order, not committed yet: it holds a row of Grace's pending count and of every user's.
      await sql`begin`.execute(held)
      await sql`insert into orders (user_id, status, total) values (2, 'pending', 1)`.execute(held)
      // Another of Grace's orders, from another connection: counted in other rows, without waiting.
      await db.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = '2s'`.execute(trx)
        await sql`insert into orders (user_id, status, total) values (2, 'pending', 2)`.execute(trx)
      })
      t.pass('the second write committed while the first was still open')
      await sql`commit`.execute(held)
    })
    assertExact(t, await countsAgainstRows(db))
  },
)
