/**
 * Every sort and filter a list offers is served by an index, for an admin and for an owner, in
 * both directions, on the first page and on a next one (decisions §17): each statement a list
 * request sends (captured through the Kysely log hook) is run again under EXPLAIN ANALYZE on tables
 * large enough for the planner to care. Every scan of orders or of the event log must be an index
 * scan that reads about a page: it may read a few rows more than it returns when PostgreSQL prefers
 * the primary key (or the log's seq) to a filter's own index for a filter that keeps a large share
 * of the rows (a tenth, here), but never more than READ_BOUND pages' worth, whatever the size of
 * the table: a customer's read of the event log never walks the events of others, even for a type
 * it has none of. The total beside the page reads no order at all (its counts: row-counts.test.ts).
 */
import t from 'tap'
import { CompiledQuery, type LogEvent, sql } from 'kysely'
import { bearer, build, gql } from '../helper.ts'

const ORDERS = 30_000
const USERS = 300
/** Owns a tenth of all orders. */
const BIG = 2
/** Owns four orders, all pending, and is the customer whose events are read. */
const SMALL = 3
const LIMIT = 20
/** How many pages' worth of orders one page may read (rows returned and rows a filter dropped). */
const READ_BOUND = 20

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Rows Removed by Filter'?: number
  'Rows Removed by Index Recheck'?: number
  Plans?: PlanNode[]
}

function* nodesOf(node: PlanNode): Generator<PlanNode> {
  yield node
  for (const child of node.Plans ?? []) yield* nodesOf(child)
}

/**
 * What is wrong with a plan: a table of the list read otherwise than by an index, or past a page
 * (a sort then has nothing to sort but what was read, so a read within bounds is a page however
 * it is ordered).
 */
function problemsOf(plan: PlanNode, pageRows: number): string[] {
  const problems: string[] = []
  for (const node of nodesOf(plan)) {
    const table = node['Relation Name']
    if (table !== 'orders' && table !== 'outbox') continue
    // An index scan, or a bitmap of an index's matches when they are few (the bound below holds either way).
    if (!/^(Index( Only)?|Bitmap Heap) Scan$/.test(node['Node Type'])) problems.push(`${node['Node Type']} on ${table}`)
    const loops = node['Actual Loops'] ?? 1
    const read = ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * loops
    if (read > READ_BOUND * pageRows)
      problems.push(`${read} rows of ${table} read for a page of ${pageRows} (${node['Index Name'] ?? 'no index'})`)
  }
  return problems
}

t.test('every list is read through an index, a page at a time, whatever it is sorted and filtered by', async (t) => {
  const captured: LogEvent[] = []
  const app = await build(t, { onQuery: (event) => void captured.push(event), env: { EVENTS_RELAY: 'false' } })
  const db = app.db
  await sql`insert into users (id, name) select g, 'User ' || g from generate_series(10, ${USERS}) as g`.execute(db)
  await sql`
    insert into orders (user_id, status, total, created_at, updated_at)
    select case when g % 10 = 0 then ${BIG} when g <= 4 then ${SMALL} else 10 + g % ${USERS - 10} end,
      case when g <= 4 then 'pending' else (array['pending', 'paid', 'cancelled', 'refunded'])[1 + (g * 7) % 4] end,
      (g * 7919) % 100000, now() - (g || ' seconds')::interval, now()
    from generate_series(1, ${ORDERS}) as g`.execute(db)
  // The event log: every order's event, owned; one event in ten of no owner (articles, comments).
  await sql`
    insert into outbox (topic, payload, owner_id, published_at, seq)
    select case when g % 10 = 0 then 'comment.added' when g % 3 = 0 then 'order.status_changed' else 'order.created' end,
      '{}', case when g % 10 = 0 then null else (select user_id from orders where id = g) end, now(), nextval('outbox_seq')
    from generate_series(1, ${ORDERS}) as g`.execute(db)
  await sql`analyze`.execute(db)

  /** Every statement `url` sends (and its next page's), explained; the problems of each. */
  async function check(url: string, headers: Record<string, string>, pageRows = LIMIT + 1): Promise<void> {
    let next: string | undefined = url
    for (const page of ['first page', 'next page']) {
      if (!next) break
      captured.length = 0
      const response: { statusCode: number; json<T>(): T } = await app.inject({ method: 'GET', url: next, headers })
      t.equal(response.statusCode, 200, `${url}: ${page} answered`)
      const body: { page?: { next: string | null }; next_cursor?: string | null } = response.json()
      const statements = captured.filter((event) => /\b(orders|outbox)\b/.test(event.query.sql))
      t.ok(statements.length > 0, `${url}: ${page} reads through a statement`)
      for (const statement of statements) {
        const explained = await db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(
          CompiledQuery.raw(`explain (analyze, format json) ${statement.query.sql}`, [...statement.query.parameters]),
        )
        const json = explained.rows[0]!['QUERY PLAN']
        const plan = (typeof json === 'string' ? JSON.parse(json) : json)[0].Plan as PlanNode
        t.same(problemsOf(plan, pageRows), [], `${url}: ${page}: ${statement.query.sql.slice(0, 60).replace(/\s+/g, ' ')}…`)
      }
      // Envelope B's next page: its cursor in place of the first page's `after`.
      const nextUrl = body.page?.next ?? (body.next_cursor ? `${url.replace('after=0&', '')}&cursor=${body.next_cursor}` : null)
      next = nextUrl ? nextUrl.replace(/^https?:\/\/[^/]+/, '') : undefined
    }
  }

  const admin = bearer(1, 'admin')
  const sorts = ['created_at', '-created_at', 'total', '-total', 'id', '-id']
  for (const filter of ['', 'status=paid&', `user_id=${BIG}&`, `user_id=${BIG}&status=refunded&`]) {
    for (const sort of sorts) await check(`/api/v1/orders?${filter}sort=${sort}&limit=${LIMIT}`, admin)
  }
  const big = bearer(BIG, 'orders:read')
  for (const filter of ['', 'status=cancelled&']) {
    for (const sort of sorts) {
      await check(`/api/v1/orders?${filter}sort=${sort}&limit=${LIMIT}`, big)
      await check(`/api/v1/users/${BIG}/orders?${filter}sort=${sort}&limit=${LIMIT}`, big)
    }
  }

  // The event log: a customer's own events and those of no owner, with and without types; an admin's.
  const small = bearer(SMALL, 'orders:read')
  for (const types of ['', '&types=order.status_changed', '&types=order.created,comment.added']) {
    await check(`/api/v1/events?after=0&limit=${LIMIT}${types}`, small, LIMIT + 1)
  }
  for (const types of ['', '&types=comment.added', '&types=order.status_changed,order.created']) {
    await check(`/api/v1/events?after=0&limit=${LIMIT}${types}`, admin, LIMIT + 1)
  }

  // GraphQL reads the same statements with the total beside the page.
  captured.length = 0
  const connection = await gql(
    app,
    `{ ordersConnection(first: ${LIMIT}, status: paid, userId: "${BIG}") { totalCount edges { node { id } } } }`,
    admin,
  )
  t.equal(connection.statusCode, 200)
  t.ok(
    captured.some((event) => /row_counts/.test(event.query.sql)),
    'totalCount is read from the counts, in the page statement',
  )
  t.notOk(
    captured.some((event) => /count\(\*\)/i.test(event.query.sql)),
    'no statement counts the rows themselves',
  )
})
