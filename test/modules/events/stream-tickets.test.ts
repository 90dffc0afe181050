/**
 * Stream tickets (decisions §13, "Event streams for browsers"): a bearer token buys a ticket that
 * opens GET /events/stream without Authorization, once, for seconds, as that caller with its
 * scopes, on any instance of the database; and CORS lets a cross-origin fetch() reader send
 * Last-Event-ID. Over real HTTP, as a browser would.
 */
import t from 'tap'
import { sql } from 'kysely'
import { createDatabase } from '../../../src/db/database.ts'
import { bearer, build, createTestDatabase } from '../../helper.ts'
import { ALAN, GRACE, logEnd, newOrder, scopes, serve } from './event-helpers.ts'
import { openStream } from './sse-client.ts'

async function ticketFor(app: Parameters<typeof newOrder>[0], user: number, scope = scopes[GRACE]) {
  const response = await app.inject({ method: 'POST', url: '/api/v1/events/stream-tickets', headers: bearer(user, scope) })
  if (response.statusCode !== 201) throw new Error(`${response.statusCode} ${response.body}`)
  return response
}

t.test('a ticket opens the stream without Authorization, as its caller, once', async (t) => {
  const app = await build(t)
  const { http } = await serve(app)
  const issued = await ticketFor(app, GRACE)
  t.equal(issued.headers['cache-control'], 'no-store')
  const { ticket, expires_at } = issued.json<{ ticket: string; expires_at: string }>()
  const validFor = Date.parse(expires_at) - Date.now()
  t.ok(validFor > 0 && validFor <= 30_000, `valid seconds (${validFor} ms)`)

  const stream = await openStream(http, `/api/v1/events/stream?ticket=${encodeURIComponent(ticket)}&after=${await logEnd(app)}`, {})
  t.teardown(() => stream.cut())
  t.equal(stream.status, 200)
  await newOrder(app, ALAN)
  const mine = await newOrder(app, GRACE)
  const [event] = await stream.waitFor(1)
  t.equal(event!.event, 'order.created')
  t.equal((event!.data.data as { id: number }).id, mine.id, "Grace's order only: Alan's is not hers to see")

  const again = await openStream(http, `/api/v1/events/stream?ticket=${encodeURIComponent(ticket)}`, {})
  t.equal(again.status, 401, 'the same ticket a second time is refused')
  t.match(JSON.parse(await again.body), { code: 'UNAUTHENTICATED', detail: /unknown, used or expired/ })
  t.match(again.headers['www-authenticate'], /^Bearer /)
})

t.test('a ticket is refused once expired, and when made up', async (t) => {
  const app = await build(t)
  const { http } = await serve(app)
  const { ticket } = (await ticketFor(app, GRACE)).json<{ ticket: string }>()
  await sql`update event_stream_tickets set expires_at = now() - interval '1 second'`.execute(app.db)
  const expired = await openStream(http, `/api/v1/events/stream?ticket=${encodeURIComponent(ticket)}`, {})
  t.equal(expired.status, 401)
  const madeUp = await openStream(http, '/api/v1/events/stream?ticket=est_madeup', {})
  t.equal(madeUp.status, 401)
  const none = await app.inject({ method: 'GET', url: '/api/v1/events/stream' })
  t.equal(none.statusCode, 401, 'neither a token nor a ticket: 401 as before')
  const anonymous = await app.inject({ method: 'POST', url: '/api/v1/events/stream-tickets' })
  t.equal(anonymous.statusCode, 401, 'a ticket takes a bearer token')
})

t.test("a ticket carries its token's scopes: without orders:read the order events stay hidden", async (t) => {
  const app = await build(t)
  const { http } = await serve(app)
  const { ticket } = (await ticketFor(app, GRACE, 'articles:write')).json<{ ticket: string }>()
  const stream = await openStream(http, `/api/v1/events/stream?ticket=${encodeURIComponent(ticket)}&after=${await logEnd(app)}`, {})
  t.teardown(() => stream.cut())
  await newOrder(app, GRACE)
  const article = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: bearer(GRACE, 'articles:write'),
    payload: { title: 'Tickets', body: 'Scoped.' },
  })
  const [event] = await stream.waitFor(1)
  t.equal(event!.event, 'article.created', 'the first event it gets is the article, not the order before it')
  t.equal((event!.data.data as { id: number }).id, article.json().id)
})

t.test('a ticket from one instance opens the stream on another, and only once across them', async (t) => {
  const database = await createTestDatabase(t)
  // On PostgreSQL a second pool, as a second instance has; PGlite is one process, so the same handle.
  const other = database.url ? await createDatabase({ url: database.url, poolSize: 5 }) : database
  if (other !== database) t.teardown(() => other.close())
  const a = await build(t, { database })
  const b = await build(t, { database: other })
  const [onA, onB] = [await serve(a), await serve(b)]
  const { ticket } = (await ticketFor(a, GRACE)).json<{ ticket: string }>()
  const [first, second] = await Promise.all([
    openStream(onB.http, `/api/v1/events/stream?ticket=${encodeURIComponent(ticket)}`, {}),
    openStream(onA.http, `/api/v1/events/stream?ticket=${encodeURIComponent(ticket)}`, {}),
  ])
  t.teardown(() => {
    first.cut()
    second.cut()
  })
  t.same([first.status, second.status].sort(), [200, 401], 'one of the two instances accepts it, the other refuses it')
})

t.test('CORS: a cross-origin preflight may ask for Last-Event-ID', async (t) => {
  const origin = 'http://app.example'
  const app = await build(t, { env: { CORS_ORIGINS: origin } })
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/api/v1/events/stream',
    headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,last-event-id' },
  })
  t.equal(preflight.statusCode, 204)
  t.match(preflight.headers['access-control-allow-headers'], /(^|,\s*)Last-Event-ID(,|$)/i)
})
