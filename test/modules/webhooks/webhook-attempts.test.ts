/**
 * What a webhook receiver and its operator see of a delivery (decisions §13, "Webhook ids and
 * attempts"): the `webhook-id` is random (unique across databases and deployments, not a
 * sequential number that repeats after a reset) and the same on every attempt; every attempt is
 * listed with its time, duration, the receiver's status or the network error, and the first bytes
 * of its answer.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { bearer, build } from '../../helper.ts'
import { answer, createEndpoint, startReceiver } from './receiver.ts'

const env = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_TIMEOUT: '5s',
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
  WEBHOOK_POLL: '20ms',
}

async function publishArticle(app: FastifyInstance) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: bearer(3, 'articles:write'),
    payload: { title: 'Attempts', body: 'Listed.' },
  })
  if (response.statusCode !== 201) throw new Error(`${response.statusCode} ${response.body}`)
}

async function deliveries(app: FastifyInstance, endpointId: number) {
  const response = await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpointId}/deliveries`, headers: bearer(2) })
  return response.json<{ data: Array<{ id: number; status: string; webhook_id: string }> }>().data
}

t.test('webhook-id is random and stored: two fresh databases never send the same one', async (t) => {
  const ids: string[] = []
  for (const _ of [1, 2]) {
    const app = await build(t, { env })
    const receiver = await startReceiver(t, answer(204))
    const { id } = await createEndpoint(app, receiver.url)
    await publishArticle(app)
    const [received] = await receiver.waitFor(1)
    const webhookId = String(received!.headers['webhook-id'])
    t.match(webhookId, /^msg_[0-9a-f]{32}$/, 'msg_ and 32 hex digits')
    for (let i = 0; (await deliveries(app, id))[0]?.status !== 'succeeded'; i++) {
      if (i > 400) throw new Error('never recorded')
      await sleep(25)
    }
    const [delivery] = await deliveries(app, id)
    t.equal(delivery!.webhook_id, webhookId, 'the delivery log shows the id that was sent')
    t.equal(delivery!.id, 1, 'both databases number their first delivery 1')
    ids.push(webhookId)
  }
  t.not(ids[0], ids[1], 'yet their webhook-ids differ')
})

t.test("every attempt is listed: time, duration, status or network error, the answer's first bytes", async (t) => {
  const app = await build(t, { env })
  let calls = 0
  const receiver = await startReceiver(t, (_received, response) => {
    calls++
    if (calls === 1) {
      // No answer at all: the connection is cut, a network error for the sender.
      response.socket?.destroy()
      return
    }
    if (calls === 2) {
      response.writeHead(503, { 'content-type': 'application/json' }).end(`{"error":"busy","pad":"${'x'.repeat(3000)}"}`)
      return
    }
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok \u00e9\u0000')
  })
  const { id } = await createEndpoint(app, receiver.url)
  await publishArticle(app)
  await receiver.waitFor(3)
  for (let i = 0; (await deliveries(app, id))[0]?.status !== 'succeeded'; i++) {
    if (i > 400) throw new Error('never succeeded')
    await sleep(25)
  }
  const [delivery] = await deliveries(app, id)
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/webhook-endpoints/${id}/deliveries/${delivery!.id}/attempts`,
    headers: bearer(2),
  })
  t.equal(response.statusCode, 200)
  const { data, next_cursor } = response.json<{
    data: Array<{
      id: number
      delivery_id: number
      attempted_at: string
      duration_ms: number
      response_status: number | null
      error: string | null
      response_body: string | null
    }>
    next_cursor: string | null
  }>()
  t.equal(next_cursor, null)
  t.equal(data.length, 3, 'three attempts, oldest first')
  t.match(data[0], { delivery_id: delivery!.id, response_status: null, error: /^network error/, response_body: null })
  t.match(data[1], { response_status: 503, error: 'the receiver answered 503' })
  t.equal(data[1]!.response_body?.length, 1024, 'the first 1,024 bytes of the answer')
  t.ok(data[1]!.response_body?.startsWith('{"error":"busy"'))
  t.match(data[2], { response_status: 200, error: null, response_body: 'ok \u00e9\ufffd' })
  for (const attempt of data) {
    t.ok(Number.isInteger(attempt.duration_ms) && attempt.duration_ms >= 0, 'a duration in ms')
  }
  t.ok(Date.parse(data[0]!.attempted_at) < Date.parse(data[1]!.attempted_at), 'in the order they were made')
  t.ok(Date.parse(data[1]!.attempted_at) < Date.parse(data[2]!.attempted_at))

  const page = await app.inject({
    method: 'GET',
    url: `/api/v1/webhook-endpoints/${id}/deliveries/${delivery!.id}/attempts?limit=2`,
    headers: bearer(2),
  })
  const rest = await app.inject({
    method: 'GET',
    url: `/api/v1/webhook-endpoints/${id}/deliveries/${delivery!.id}/attempts?limit=2&cursor=${page.json().next_cursor}`,
    headers: bearer(2),
  })
  t.same(
    [...page.json().data, ...rest.json().data].map((attempt: { id: number }) => attempt.id),
    data.map((attempt) => attempt.id),
    'paged by cursor',
  )

  const other = await app.inject({
    method: 'GET',
    url: `/api/v1/webhook-endpoints/${id}/deliveries/${delivery!.id + 1000}/attempts`,
    headers: bearer(2),
  })
  t.equal(other.statusCode, 404, 'a delivery the endpoint does not have is 404')
  const stranger = await app.inject({
    method: 'GET',
    url: `/api/v1/webhook-endpoints/${id}/deliveries/${delivery!.id}/attempts`,
    headers: bearer(3),
  })
  t.equal(stranger.statusCode, 404, "another user's endpoint is 404")
})
