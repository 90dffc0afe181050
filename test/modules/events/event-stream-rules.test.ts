/** The event list and stream's refusals (400, 401, 410, 429), paging, heartbeats and shutdown. */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { pruneEventLog } from '../../../src/db/repositories/outbox.ts'
import { bearer, build, tokenFor } from '../../helper.ts'
import { client } from '../../graphql/subscription-clients.ts'
import { ALAN, GRACE, logEnd, newOrder, relayed, scopes, serve, subscribe } from './event-helpers.ts'
import { openStream } from './sse-client.ts'

t.test('resuming after a pruned event: 410 EVENTS_EXPIRED on the list, the stream and a subscription', async (t) => {
  const app = await build(t)
  const { ws, http } = await serve(app)
  // Two events, both pruned: resuming after the first is after an event no longer kept (0 is the
  // start of the log, which is never expired).
  const logStart = await logEnd(app)
  await newOrder(app, GRACE)
  await newOrder(app, GRACE)
  const start = (await relayed(app, logStart, 2))[0]!.id
  await pruneEventLog(app.db, 0)
  const list = await app.inject({ method: 'GET', url: `/api/v1/events?after=${start}`, headers: bearer(GRACE) })
  t.equal(list.statusCode, 410)
  t.match(list.json(), { status: 410, code: 'EVENTS_EXPIRED' })
  const stream = await openStream(http, '/api/v1/events/stream', { ...bearer(GRACE), 'last-event-id': start })
  t.equal(stream.status, 410)
  t.match(stream.headers['content-type'], /^application\/problem\+json/)
  t.match(JSON.parse(await stream.body), { code: 'EVENTS_EXPIRED' })
  const c = client(t, ws, tokenFor(GRACE, scopes[GRACE]))
  const subscription = subscribe(c, `subscription { orderCreated(after: "${start}") { id } }`)
  for (let attempt = 0; attempt < 200 && subscription.errors.length === 0; attempt++) await sleep(25)
  t.match(subscription.errors.flat(), [{ extensions: { code: 'BAD_USER_INPUT', reason: 'EVENTS_EXPIRED' } }])
})

t.test('bad resume points and types are 400; the list pages with cursors that keep their types', async (t) => {
  const app = await build(t)
  const { http } = await serve(app)
  const start = await logEnd(app)
  for (let n = 0; n < 3; n++) await newOrder(app, GRACE)
  await relayed(app, start, 3)
  const bad = await openStream(http, '/api/v1/events/stream', { ...bearer(GRACE), 'last-event-id': 'abc' })
  t.equal(bad.status, 400)
  t.match(JSON.parse(await bad.body), { code: 'VALIDATION_FAILED', errors: [{ in: 'header', name: 'last-event-id' }] })
  for (const query of ['types=order.paid', 'after=-1', 'after=01', 'limit=0', 'limit=101']) {
    const response = await app.inject({ method: 'GET', url: `/api/v1/events?${query}`, headers: bearer(GRACE) })
    t.equal(response.statusCode, 400, query)
  }
  const first = await app.inject({
    method: 'GET',
    url: `/api/v1/events?after=${start}&types=order.created&limit=2`,
    headers: bearer(GRACE),
  })
  t.equal(first.statusCode, 200)
  t.equal(first.json().data.length, 2)
  const cursor = first.json().next_cursor
  t.type(cursor, 'string')
  const second = await app.inject({ method: 'GET', url: `/api/v1/events?cursor=${cursor}`, headers: bearer(GRACE) })
  t.same(
    second.json().data.map((event: { type: string }) => event.type),
    ['order.created'],
  )
  t.equal(second.json().next_cursor, null, 'the end of the log')
  const conflicting = await app.inject({
    method: 'GET',
    url: `/api/v1/events?cursor=${cursor}&types=comment.added`,
    headers: bearer(GRACE),
  })
  t.equal(conflicting.statusCode, 400)
  t.equal(conflicting.json().code, 'CURSOR_MISMATCH')
  const both = await app.inject({ method: 'GET', url: `/api/v1/events?cursor=${cursor}&after=1`, headers: bearer(GRACE) })
  t.equal(both.statusCode, 400)
  const anonymous = await app.inject({ method: 'GET', url: '/api/v1/events' })
  t.equal(anonymous.statusCode, 401)
})

t.test('streams: at most EVENTS_STREAM_MAX_PER_CALLER per caller, heartbeats, ended on shutdown', async (t) => {
  const app = await build(t, { env: { EVENTS_STREAM_MAX_PER_CALLER: '2', EVENTS_STREAM_HEARTBEAT: '50ms' } })
  const { http } = await serve(app)
  const one = await openStream(http, '/api/v1/events/stream', bearer(GRACE))
  const two = await openStream(http, '/api/v1/events/stream', bearer(GRACE))
  const three = await openStream(http, '/api/v1/events/stream', bearer(GRACE))
  t.same([one.status, two.status, three.status], [200, 200, 429])
  t.match(JSON.parse(await three.body), { code: 'TOO_MANY_STREAMS' })
  t.ok(three.headers['retry-after'])
  const otherCaller = await openStream(http, '/api/v1/events/stream', bearer(ALAN))
  t.equal(otherCaller.status, 200, 'the limit is per caller')
  one.cut()
  let again = await openStream(http, '/api/v1/events/stream', bearer(GRACE))
  for (let attempt = 0; attempt < 100 && again.status === 429; attempt++) {
    await sleep(20)
    again = await openStream(http, '/api/v1/events/stream', bearer(GRACE))
  }
  t.equal(again.status, 200, 'a closed stream frees its slot')
  for (let attempt = 0; attempt < 200 && two.comments < 3; attempt++) await sleep(25)
  t.ok(two.comments >= 3, 'an idle stream gets comment lines')
  t.equal(app.eventStreams.count(), 3)
  await app.close()
  await Promise.all([two.ended, again.ended, otherCaller.ended])
  t.pass('shutdown ends every stream')
})
