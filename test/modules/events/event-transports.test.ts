/**
 * One event log, every transport (decisions §13): the same events, read through the list, the SSE
 * stream, a webhook endpoint (a real local receiver) and GraphQL subscriptions by an owner, another
 * user and an admin, are exactly each caller's, in the same order.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { bearer, build, tokenFor } from '../../helper.ts'
import { client } from '../../graphql/subscription-clients.ts'
import { answer, startReceiver } from '../webhooks/receiver.ts'
import { ADA, ALAN, GRACE, listIds, logEnd, newOrder, post, relayed, scopes, serve, subscribe } from './event-helpers.ts'
import { openStream } from './sse-client.ts'

t.test('the list, the stream, webhooks and subscriptions show each caller exactly its events, in the same order', async (t) => {
  const app = await build(t, { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL: '20ms' } })
  const { ws, http } = await serve(app)
  const start = await logEnd(app)
  const receivers = new Map<number, Awaited<ReturnType<typeof startReceiver>>>()
  for (const user of [GRACE, ALAN, ADA]) {
    const receiver = await startReceiver(t, answer(204))
    // An endpoint receives from its creation on: created before the first write, it sees them all.
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: bearer(user, scopes[user as 1]),
      payload: { url: receiver.url },
    })
    t.equal(created.statusCode, 201, `user ${user}: webhook endpoint created`)
    receivers.set(user, receiver)
  }
  const readers = [GRACE, ALAN, ADA].map((user) => {
    const c = client(t, ws, tokenFor(user, scopes[user as 1]))
    return {
      user,
      c,
      hook: receivers.get(user)!,
      // From `start`: whenever the server registers them, they replay what came before, then go live.
      created: subscribe(c, `subscription { orderCreated(after: "${start}") { id } }`),
      changed: subscribe(c, `subscription { orderStatusChanged(after: "${start}") { id status } }`),
      stream: openStream(http, `/api/v1/events/stream?after=${start}`, bearer(user, scopes[user as 1])),
    }
  })
  const graceOrder = await newOrder(app, GRACE)
  await newOrder(app, ALAN)
  await post(app, GRACE, `/api/v1/orders/${graceOrder.id}/payment`, {})
  const article = await post(app, GRACE, '/api/v1/articles', { title: 'Events', body: 'One log.' })
  await post(app, 4, `/api/v1/articles/${article.id}/comments`, { body: 'Every transport.' })
  const all = await relayed(app, start, 5)
  const [graceCreated, alanCreated, gracePaid, articleCreated, commentAdded] = all.map((event) => event.id)
  const expected: Record<number, string[]> = {
    [GRACE]: [graceCreated!, gracePaid!, articleCreated!, commentAdded!],
    [ALAN]: [alanCreated!, articleCreated!, commentAdded!],
    [ADA]: [graceCreated!, alanCreated!, gracePaid!, articleCreated!, commentAdded!],
  }
  const typeOf = new Map(all.map((event) => [event.id, event.type]))

  for (const reader of readers) {
    const mine = expected[reader.user]!
    const list = await listIds(app, reader.user, start)
    t.same(
      list.map((event) => event.id),
      mine,
      `user ${reader.user}: the list`,
    )
    const stream = await reader.stream
    t.equal(stream.status, 200)
    t.match(stream.headers['content-type'], /^text\/event-stream/)
    const streamed = await stream.waitFor(mine.length)
    t.same(
      streamed.map((message) => [message.id, message.event, message.data.id]),
      mine.map((id) => [id, typeOf.get(id), id]),
      `user ${reader.user}: the stream`,
    )
    const posted = await reader.hook.waitFor(mine.length)
    t.same(
      posted.map((request) => {
        const event = JSON.parse(request.body) as { id: string; type: string }
        return [request.headers['webhook-id'] !== undefined, event.id, event.type]
      }),
      mine.map((id) => [true, id, typeOf.get(id)]),
      `user ${reader.user}: the webhook`,
    )
    // A subscription replays what it missed: commentAdded is subscribed after the comment, from `start`.
    const comments = subscribe(reader.c, `subscription { commentAdded(articleId: ${article.id}, after: "${start}") { id } }`)
    const ofType = (type: string) => mine.filter((id) => typeOf.get(id) === type)
    t.same(await reader.created.waitFor(ofType('order.created').length), ofType('order.created'), `user ${reader.user}: orderCreated`)
    t.same(
      await reader.changed.waitFor(ofType('order.status_changed').length),
      ofType('order.status_changed'),
      `user ${reader.user}: orderStatusChanged`,
    )
    t.same(await comments.waitFor(1), [commentAdded], `user ${reader.user}: commentAdded, replayed`)
    t.same([...reader.created.errors, ...reader.changed.errors, ...comments.errors], [])
  }
  await sleep(300)
  for (const reader of readers) {
    const mine = expected[reader.user]!
    t.equal((await reader.stream).messages.length, mine.length, `user ${reader.user}: nothing more on the stream`)
    t.equal(reader.hook.received.length, mine.length, `user ${reader.user}: nothing more posted to the webhook`)
    t.equal(reader.created.received.length + reader.changed.received.length, mine.length - 2, `user ${reader.user}: nothing more live`)
  }
})
