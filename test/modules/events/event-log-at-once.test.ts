/**
 * The event log shows a write at once (decisions §13, "A write's events are in the log when its
 * answer is sent"): once a create's 201 is received, the list, the stream replaying after a point
 * and a subscription with `after` show its event, through the instance that wrote it and through
 * another one, whether or not any instance relays in the background; and a reader that resumes
 * after the last event it saw never misses one that was numbered later (seq order is commit
 * order). On PostgreSQL the relay numbers events after the commit, so without the reader's own
 * catch-up the first read misses the event most of the time, and always when no instance relays.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { bearer, tokenFor } from '../../helper.ts'
import { client } from '../../graphql/subscription-clients.ts'
import { onPostgres, twoInstances } from '../../plugins/event-delivery-fixtures.ts'
import { ADA, GRACE, logEnd, newOrder, scopes, serve, subscribe } from './event-helpers.ts'
import { openStream } from './sse-client.ts'

const grace = bearer(GRACE, scopes[GRACE])

async function listCreated(app: FastifyInstance, after: string): Promise<Array<{ id: string; data: { id: number } }>> {
  const response = await app.inject({ method: 'GET', url: `/api/v1/events?after=${after}&types=order.created&limit=100`, headers: grace })
  if (response.statusCode !== 200) throw new Error(`GET /events: ${response.statusCode} ${response.body}`)
  return response.json().data
}

for (const relaying of [true, false]) {
  for (const instances of [1, 2]) {
    const how = `${instances === 1 ? 'through the writing instance' : 'through another instance'}, ${relaying ? 'with' : 'without'} a background relay`
    t.test(
      `a create's event is in the list, the stream and a subscription with after as soon as its 201 is received, ${how}`,
      async (t) => {
        const env: Record<string, string> = relaying ? {} : { EVENTS_RELAY: 'false' }
        const { a, b } = await twoInstances(t, { a: env, b: env })
        const writer = a
        const reader = instances === 1 ? a : b
        const { ws, http } = await serve(reader)
        const subscriber = client(t, ws, tokenFor(GRACE, scopes[GRACE]))
        let last = await logEnd(reader)
        // PGlite numbers an event before the write's answer is sent (its NOTIFY runs the relay in-process): a check, not a race.
        const iterations = onPostgres ? (relaying ? 12 : 6) : 2
        for (let i = 0; i < iterations; i++) {
          const before = last
          const order = await newOrder(writer, GRACE)
          const listed = await listCreated(reader, before)
          t.same(
            listed.map((event) => event.data.id),
            [order.id],
            `iteration ${i}: the list after ${before} shows the new order's event, and only it`,
          )
          const event = listed[0]
          if (!event) return
          t.same(await listCreated(reader, event.id), [], `iteration ${i}: its id is usable as after`)
          last = event.id
          // The stream and the subscription replay what is in the log after `before`: the same event.
          if (i % 3 !== 0) continue
          const stream = await openStream(http, `/api/v1/events/stream?after=${before}&types=order.created`, grace)
          t.equal(stream.status, 200)
          const streamed = await stream.waitFor(1, 5000)
          t.same(
            streamed.map((message) => [message.id, (message.data.data as { id: number }).id]),
            [[event.id, order.id]],
            `iteration ${i}: the stream after ${before}`,
          )
          stream.cut()
          const replay = subscribe(subscriber, `subscription { orderCreated(after: "${before}") { databaseId } }`)
          t.same(await replay.waitFor(1), [event.id], `iteration ${i}: the subscription after ${before}`)
          t.same(replay.errors, [])
          replay.unsubscribe()
        }
      },
    )
  }
}

t.test('readers that resume after the last event they saw miss none, while two instances write and read at once', async (t) => {
  // The readers poll as fast as they are answered: past the default rate limit on PGlite.
  const env = { RATE_LIMIT_MAX: '100000' }
  const { a, b } = await twoInstances(t, { a: env, b: env })
  const start = await logEnd(a)
  const admin = bearer(ADA, scopes[ADA])
  const writing = (app: FastifyInstance) => async () => {
    for (let i = 0; i < 15; i++) await newOrder(app, GRACE)
  }
  let writersDone = false
  const reading = async (app: FastifyInstance): Promise<string[]> => {
    const seen: string[] = []
    let after = start
    // Reads on until the writers are done, then once more: everything committed by then.
    for (let finalRead = false; ; ) {
      finalRead = writersDone
      const response = await app.inject({ method: 'GET', url: `/api/v1/events?after=${after}&limit=100`, headers: admin })
      if (response.statusCode !== 200) throw new Error(`GET /events: ${response.statusCode} ${response.body}`)
      const ids: string[] = response.json().data.map((event: { id: string }) => event.id)
      seen.push(...ids)
      after = ids.at(-1) ?? after
      if (finalRead && ids.length < 100) return seen
      await sleep(5)
    }
  }
  const writers = Promise.all([writing(a)(), writing(b)(), writing(a)()]).then(() => {
    writersDone = true
  })
  const [, ...readers] = await Promise.all([writers, reading(a), reading(b), reading(a)])
  const response = await a.inject({ method: 'GET', url: `/api/v1/events?after=${start}&limit=100`, headers: admin })
  const log: string[] = response.json().data.map((event: { id: string }) => event.id)
  t.equal(log.length, 45, 'every create is in the log')
  for (const [index, ids] of readers.entries()) t.same(ids, log, `reader ${index} saw every event, once, in log order`)
})
