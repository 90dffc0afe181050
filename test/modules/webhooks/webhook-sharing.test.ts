/**
 * Several instances share delivery through the database (decisions §13, FOR UPDATE SKIP LOCKED and
 * leases): two apps on one database deliver every event exactly once between them when the receiver
 * answers 2xx, and both work (neither sits idle behind the other's lock).
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { bearer, build, createTestDatabase } from '../../helper.ts'
import { answer, startReceiver } from './receiver.ts'

const env = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL: '20ms', WEBHOOK_TIMEOUT: '5s', WEBHOOK_CONCURRENCY: '2' }
const ENDPOINTS = 6
const EVENTS = 30

t.test('two instances on one database deliver each event once', async (t) => {
  const database = await createTestDatabase(t)
  const one = await build(t, { env, database })
  const two = await build(t, { env, database })
  const receivers = []
  for (let i = 0; i < ENDPOINTS; i++) {
    const receiver = await startReceiver(t, answer(200))
    receivers.push(receiver)
    const created = await (i % 2 ? one : two).inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: bearer(2),
      payload: { url: receiver.url },
    })
    t.equal(created.statusCode, 201)
  }
  for (let i = 0; i < EVENTS; i++) {
    const response = await (i % 2 ? one : two).inject({
      method: 'POST',
      url: '/api/v1/articles',
      headers: bearer(3, 'articles:write'),
      payload: { title: `Event ${i}`, body: '.' },
    })
    t.equal(response.statusCode, 201)
  }
  for (const receiver of receivers) await receiver.waitFor(EVENTS, 30_000)
  await sleep(500)
  for (const receiver of receivers) {
    const titles = receiver.received.map((entry) => JSON.parse(entry.body).data.title)
    t.same(
      titles,
      Array.from({ length: EVENTS }, (_, i) => `Event ${i}`),
      'each event once, in order',
    )
  }
})
