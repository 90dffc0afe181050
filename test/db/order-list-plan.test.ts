/**
 * The order list filtered by user and status, newest first, is served by an index: the statement
 * the REST handler actually runs (captured through the Kysely log hook) is EXPLAINed on a table
 * large enough for the planner to care.
 */
import t from 'tap'
import { sql, type LogEvent } from 'kysely'
import { bearer, build } from '../helper.ts'

t.test('GET /orders?status=…&sort=-created_at uses an index, not a scan of every order', async (t) => {
  const captured: LogEvent[] = []
  // The outbox relay's polling would be captured too.
  const app = await build(t, { onQuery: (event) => void captured.push(event), env: { EVENTS_RELAY: 'false' } })
  await sql`
    insert into orders (user_id, status, total, created_at, updated_at)
    select 1 + n % 4, (array['pending', 'paid', 'cancelled', 'refunded'])[1 + n % 4], n, now() - (n || ' seconds')::interval, now()
    from generate_series(1, 20000) as n`.execute(app.db)
  await sql`analyze orders`.execute(app.db)

  captured.length = 0
  const response = await app.inject({
    method: 'GET',
    url: '/api/v1/orders?status=paid&sort=-created_at&limit=20',
    headers: bearer(2, 'orders:read'),
  })
  t.equal(response.statusCode, 200)
  const page = captured.find((event) => /from "orders"/.test(event.query.sql) && /order by/.test(event.query.sql))
  t.ok(page, 'the page statement was captured')
  const plan = await sql<{ 'QUERY PLAN': string }>`explain ${sql.raw(
    page!.query.sql.replace(/\$(\d+)/g, (_, n) => {
      const value = page!.query.parameters[Number(n) - 1]
      return typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`
    }),
  )}`.execute(app.db)
  const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n')
  t.match(text, /Index (Only )?Scan.*orders_user_status_created_idx/, `plan uses the (user_id, status, created_at, id) index:\n${text}`)
  t.notMatch(text, /Seq Scan on orders/, 'no sequential scan of orders')
  // The page's order comes from the index. Each order's few items are put in stored sequence
  // inside the statement that builds its JSON text (decisions §6, "Reads built by the database"):
  // PostgreSQL 16 and later (PGlite) plan that ordered aggregate with a Sort of those items, which
  // is not the page's.
  const pageSorts = text.split('\n').filter((line) => /Sort Key/.test(line) && !/Sort Key: i\."?position"?$/.test(line.trim()))
  t.same(pageSorts, [], 'no sort step for the page: the index delivers the order')
  t.notMatch(text, /Sort Key: .*created_at/, 'no sort of the orders by time')
  t.ok(captured.length <= 4, `a fixed, small number of statements per list request (${captured.length})`)
})
