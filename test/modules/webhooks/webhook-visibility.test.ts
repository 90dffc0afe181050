/**
 * A webhook endpoint receives exactly the events its owner may read (decisions §13, the event
 * core's visibility rule), in seq order: an order's owner its orders, another user only articles and
 * comments, an admin everything; a `types` filter narrows that.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { bearer, build } from '../../helper.ts'
import { answer, startReceiver } from './receiver.ts'

const env = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL: '20ms' }

async function createEndpoint(app: FastifyInstance, url: string, headers: Record<string, string>, types?: string[]) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    headers,
    payload: { url, ...(types ? { types } : {}) },
  })
  if (response.statusCode !== 201) throw new Error(`${response.statusCode} ${response.body}`)
  return response.json<{ id: number }>()
}

t.test('owner, other user and admin endpoints receive exactly their events, in seq order', async (t) => {
  const app = await build(t, { env })
  const grace = await startReceiver(t, answer(200))
  const alan = await startReceiver(t, answer(200))
  const ada = await startReceiver(t, answer(200))
  const graceArticles = await startReceiver(t, answer(200))
  await createEndpoint(app, grace.url, bearer(2))
  await createEndpoint(app, alan.url, bearer(3))
  await createEndpoint(app, ada.url, bearer(1, 'admin'))
  await createEndpoint(app, graceArticles.url, bearer(2), ['article.created'])

  const post = async (headers: Record<string, string>, url: string, payload: object) => {
    const response = await app.inject({ method: 'POST', url, headers, payload })
    if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
    return response.json<{ id: number }>()
  }
  const graceOrder = await post(bearer(2), '/api/v1/orders', { items: [{ sku: 'KB-101', qty: 1 }] })
  await post(bearer(2), `/api/v1/orders/${graceOrder.id}/payment`, {})
  const article = await post(bearer(3, 'articles:write'), '/api/v1/articles', { title: 'Hooks', body: 'For all.' })
  await post(bearer(2, 'articles:write'), `/api/v1/articles/${article.id}/comments`, { body: 'Seen by all.' })
  const alanOrder = await post(bearer(3), '/api/v1/orders', { items: [{ sku: 'KB-101', qty: 2 }] })

  await ada.waitFor(5)
  await grace.waitFor(4)
  await alan.waitFor(3)
  await graceArticles.waitFor(1)
  await sleep(300)
  const seen = (receiver: { received: Array<{ body: string }> }) =>
    receiver.received.map((entry) => {
      const event = JSON.parse(entry.body) as { id: string; type: string; data: { id: number } }
      return { id: Number(event.id), what: `${event.type} ${event.data.id}` }
    })
  const inOrder = (events: Array<{ id: number }>) => events.every((event, i) => i === 0 || event.id > events[i - 1]!.id)

  const all = [
    `order.created ${graceOrder.id}`,
    `order.status_changed ${graceOrder.id}`,
    `article.created ${article.id}`,
    `comment.added ${seen(ada)[3]?.what.split(' ')[1]}`,
    `order.created ${alanOrder.id}`,
  ]
  t.same(
    seen(ada).map((event) => event.what),
    all,
  )
  t.same(
    seen(grace).map((event) => event.what),
    all.slice(0, 4),
  )
  t.same(
    seen(alan).map((event) => event.what),
    all.slice(2),
  )
  t.same(
    seen(graceArticles).map((event) => event.what),
    [all[2]],
  )
  for (const receiver of [ada, grace, alan]) t.ok(inOrder(seen(receiver)), 'in seq order')
})

t.test('an endpoint created after an event does not receive it', async (t) => {
  const app = await build(t, { env })
  await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: bearer(3, 'articles:write'),
    payload: { title: 'Before', body: '.' },
  })
  await sleep(200)
  const receiver = await startReceiver(t, answer(200))
  await createEndpoint(app, receiver.url, bearer(2))
  await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: bearer(3, 'articles:write'),
    payload: { title: 'After', body: '.' },
  })
  const [first] = await receiver.waitFor(1)
  await sleep(300)
  t.equal(receiver.received.length, 1)
  t.equal(JSON.parse(first!.body).data.title, 'After')
})
