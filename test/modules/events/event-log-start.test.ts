/**
 * "From the start of the log" is the oldest event still kept, on every transport (decisions §13):
 * once events were pruned, the list without `after` and with `after=0`, the stream's `?after=0`
 * and a subscription's `after: "0"` answer from the oldest kept, never 410. A resume point that
 * really is older than what is kept is 410 EVENTS_EXPIRED with `resumeAfter`, a field of the
 * problem (openapi.yaml) and of GraphQL's extensions.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { pruneEventLog } from '../../../src/db/repositories/outbox.ts'
import { bearer, build, tokenFor } from '../../helper.ts'
import { client } from '../../graphql/subscription-clients.ts'
import { ADA, GRACE, logEnd, newOrder, relayed, scopes, serve, subscribe } from './event-helpers.ts'
import { openStream } from './sse-client.ts'

t.test('after pruning, every transport starts from the oldest event kept; an older resume point is 410 with resumeAfter', async (t) => {
  const app = await build(t)
  const { ws, http } = await serve(app)
  const start = await logEnd(app)
  await newOrder(app, GRACE)
  await newOrder(app, GRACE)
  const [older, pruned] = await relayed(app, start, 2)
  await pruneEventLog(app.db, 0)
  const order = await newOrder(app, GRACE)
  const [kept] = await relayed(app, pruned!.id, 1)
  t.ok(Number(kept!.id) > Number(pruned!.id))

  for (const url of ['/api/v1/events', '/api/v1/events?after=0']) {
    const list = await app.inject({ method: 'GET', url, headers: bearer(GRACE) })
    t.equal(list.statusCode, 200, `${url}: not 410`)
    t.equal(list.json().data[0]?.id, kept!.id, `${url}: starts with the oldest event kept`)
  }

  const stream = await openStream(http, '/api/v1/events/stream?after=0', bearer(GRACE))
  t.equal(stream.status, 200, 'the stream from ?after=0: not 410')
  t.equal((await stream.waitFor(1))[0]?.id, kept!.id, 'and its first event is the oldest kept')
  stream.cut()

  const c = client(t, ws, tokenFor(GRACE, scopes[GRACE]))
  const fromStart = subscribe(c, 'subscription { orderCreated(after: "0") { databaseId } }')
  await fromStart.waitFor(1)
  t.same(fromStart.errors, [], 'a subscription from after: "0": no error')
  t.same(
    fromStart.received.map((event) => [event.eventId, event.data.orderCreated?.databaseId]),
    [[kept!.id, order.id]],
    'it replays the oldest kept',
  )

  const expired = await app.inject({ method: 'GET', url: `/api/v1/events?after=${older!.id}`, headers: bearer(ADA, scopes[ADA]) })
  t.equal(expired.statusCode, 410, 'a resume point older than what is kept: 410')
  t.match(expired.json(), { code: 'EVENTS_EXPIRED', resumeAfter: pruned!.id }, 'the problem carries resumeAfter')
  const late = subscribe(c, `subscription { orderCreated(after: "${older!.id}") { id } }`)
  for (let attempt = 0; attempt < 200 && late.errors.length === 0; attempt++) await sleep(25)
  t.match(late.errors.flat(), [{ extensions: { reason: 'EVENTS_EXPIRED', resumeAfter: pruned!.id } }], 'and GraphQL its extensions')
})
