/**
 * Webhook delivery against a real receiver (decisions §13): signed per Standard Webhooks (verified
 * with the `standardwebhooks` package), retried with the same webhook-id on the configured schedule
 * after a 500, a timeout, a redirect (never followed) or a receiver that is down, and never sent
 * again once answered 2xx.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import { bearer, build } from '../../helper.ts'
import { answer, createEndpoint, hang, startReceiver } from './receiver.ts'

/** Retries after 150 ms, then every 300 ms; attempts cut off after 300 ms. */
const env = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_TIMEOUT: '300ms',
  WEBHOOK_RETRY_SCHEDULE: '150ms,300ms',
  WEBHOOK_POLL: '20ms',
}

async function publishArticle(app: FastifyInstance, title = 'Hooks') {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: bearer(3, 'articles:write'),
    payload: { title, body: 'Signed.' },
  })
  if (response.statusCode !== 201) throw new Error(`${response.statusCode} ${response.body}`)
  return response.json<{ id: number }>()
}

t.test('a delivery is signed per Standard Webhooks and carries the public event; a 2xx ends it', async (t) => {
  // A generous timeout: a slow answer (the test machine is busy) would rightly be sent again.
  const app = await build(t, { env: { ...env, WEBHOOK_TIMEOUT: '5s' } })
  const receiver = await startReceiver(t, answer(204))
  const { secret } = await createEndpoint(app, receiver.url)
  const article = await publishArticle(app)
  const [received] = await receiver.waitFor(1)
  const headers = {
    'webhook-id': String(received!.headers['webhook-id']),
    'webhook-timestamp': String(received!.headers['webhook-timestamp']),
    'webhook-signature': String(received!.headers['webhook-signature']),
  }
  t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/)
  const event = new Webhook(secret).verify(received!.body, headers) as { id: string; type: string; data: { id: number } }
  t.equal(event.type, 'article.created')
  t.equal(event.data.id, article.id)
  t.throws(() => new Webhook(`whsec_${Buffer.from('another secret of 24 b!!').toString('base64')}`).verify(received!.body, headers))
  // Answered 204: never sent again, however many polls pass.
  await sleep(600)
  t.equal(receiver.received.length, 1)
})

for (const [fault, behaviour, timeout] of [
  ['answers 500', answer(500), '5s'],
  ['times out', hang, '300ms'],
] as const) {
  t.test(`a receiver that ${fault} gets the same webhook-id again on the configured schedule`, async (t) => {
    const app = await build(t, { env: { ...env, WEBHOOK_TIMEOUT: timeout } })
    const receiver = await startReceiver(t, behaviour)
    const { id } = await createEndpoint(app, receiver.url)
    await publishArticle(app)
    const failed = await receiver.waitFor(3)
    receiver.setBehaviour(answer(200))
    const deliveryLog = async () =>
      (await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}/deliveries`, headers: bearer(2) })).json().data[0]
    for (let i = 0; (await deliveryLog()).status !== 'succeeded'; i++) {
      if (i > 400) throw new Error('never succeeded')
      await sleep(25)
    }
    // First retry after ≥150 ms, the next ones after ≥300 ms (plus the timeout when it hangs).
    t.ok(failed[1]!.at - failed[0]!.at >= 140, `first retry after ${failed[1]!.at - failed[0]!.at} ms`)
    t.ok(failed[2]!.at - failed[1]!.at >= 290, `second retry after ${failed[2]!.at - failed[1]!.at} ms`)
    const sent = receiver.received.length
    t.ok(sent >= 4)
    await sleep(500)
    t.equal(receiver.received.length, sent, 'not sent again once a 200 was recorded')
    const ids = new Set(receiver.received.map((entry) => entry.headers['webhook-id']))
    t.equal(ids.size, 1, 'one webhook-id for every attempt')
    t.match(await deliveryLog(), { status: 'succeeded', attempts: sent, last_response_status: 200, webhook_id: [...ids][0] })
  })
}

t.test('a redirect is not followed: a 3xx is a failed attempt, retried at the same URL', async (t) => {
  const app = await build(t, { env })
  const elsewhere = await startReceiver(t, answer(200))
  const receiver = await startReceiver(t, (_received, response) => {
    response.statusCode = 307
    response.setHeader('location', elsewhere.url)
    response.end()
  })
  const { id } = await createEndpoint(app, receiver.url)
  await publishArticle(app)
  await receiver.waitFor(2)
  await sleep(300)
  t.equal(elsewhere.received.length, 0, 'the Location is never called')
  const [delivery] = (await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}/deliveries`, headers: bearer(2) })).json()
    .data
  t.match(delivery, { status: 'pending', last_response_status: 307 })
  t.ok(delivery.attempts >= 2, 'retried at the endpoint itself')
})

t.test('an outcome whose recording fails once is recorded on the next try: the 2xx delivery is not sent again', async (t) => {
  const app = await build(t, { env: { ...env, WEBHOOK_TIMEOUT: '5s' } })
  // A real statement failure: the first update that marks a delivery succeeded raises. A sequence
  // counts the tries: nextval is not rolled back with the failed statement.
  await sql`create sequence record_tries`.execute(app.database.db)
  await sql`
    create function fail_record_once() returns trigger language plpgsql as $$
    begin
      if new.status = 'succeeded' and nextval('record_tries') = 1 then
        raise exception 'injected: recording the outcome failed';
      end if;
      return new;
    end $$`.execute(app.database.db)
  await sql`create trigger fail_record_once before update on webhook_deliveries for each row execute function fail_record_once()`.execute(
    app.database.db,
  )
  const receiver = await startReceiver(t, answer(204))
  const { id } = await createEndpoint(app, receiver.url)
  await publishArticle(app)
  await receiver.waitFor(1)
  for (let i = 0; ; i++) {
    const log = await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}/deliveries`, headers: bearer(2) })
    if (log.json().data[0]?.status === 'succeeded') break
    if (i > 200) throw new Error('the outcome was never recorded')
    await sleep(25)
  }
  const [tries] = (await sql<{ n: number }>`select last_value as n from record_tries`.execute(app.database.db)).rows
  t.equal(Number(tries?.n), 2, 'the first recording failed, the second stood')
  await sleep(300)
  t.equal(receiver.received.length, 1, 'sent once')
})

t.test('a receiver that is down gets the delivery once it is back, with the same webhook-id', async (t) => {
  const app = await build(t, { env })
  const first = await startReceiver(t, answer(204))
  const port = first.port
  await first.close()
  const { id } = await createEndpoint(app, `http://127.0.0.1:${port}/hook`)
  await publishArticle(app)
  // Wait until at least two attempts failed with a network error.
  for (let i = 0; ; i++) {
    const log = await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}/deliveries`, headers: bearer(2) })
    const [delivery] = log.json().data
    if (delivery?.attempts >= 2) {
      t.match(delivery, { status: 'pending', last_response_status: null, last_error: /network error/ })
      break
    }
    if (i > 200) throw new Error('no failed attempts')
    await sleep(25)
  }
  const { createServer } = await import('node:http')
  const got: string[] = []
  const server = createServer((request, response) => {
    got.push(String(request.headers['webhook-id']))
    request.resume()
    response.end()
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  for (let i = 0; got.length === 0; i++) {
    if (i > 200) throw new Error('never delivered after the receiver came back')
    await sleep(25)
  }
  const log = await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}/deliveries`, headers: bearer(2) })
  t.equal(got[0], log.json().data[0].webhook_id)
})

t.test('after WEBHOOK_DISABLE_AFTER of failures the endpoint is disabled; a retry enables it and redelivers', async (t) => {
  const app = await build(t, { env: { ...env, WEBHOOK_DISABLE_AFTER: '500ms' } })
  const receiver = await startReceiver(t, answer(503))
  const { id } = await createEndpoint(app, receiver.url)
  await publishArticle(app)
  let endpoint: { enabled: boolean; disabled_reason: string | null } | undefined
  for (let i = 0; !endpoint || endpoint.enabled; i++) {
    if (i > 200) throw new Error('the endpoint was never disabled')
    await sleep(25)
    endpoint = (await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}`, headers: bearer(2) })).json()
  }
  t.match(endpoint.disabled_reason, /503/)
  const attempts = receiver.received.length
  await sleep(300)
  t.equal(receiver.received.length, attempts, 'a disabled endpoint gets nothing')
  const [delivery] = (await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}/deliveries`, headers: bearer(2) })).json()
    .data
  t.equal(delivery.status, 'failed')

  receiver.setBehaviour(answer(200))
  const retried = await app.inject({
    method: 'POST',
    url: `/api/v1/webhook-endpoints/${id}/deliveries/${delivery.id}/retry`,
    headers: bearer(2),
  })
  t.equal(retried.statusCode, 202)
  t.equal(retried.json().status, 'pending')
  const all = await receiver.waitFor(attempts + 1)
  t.equal(all.at(-1)!.headers['webhook-id'], delivery.webhook_id)
  const after = (await app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}`, headers: bearer(2) })).json()
  t.equal(after.enabled, true)
})
