/**
 * The event log's core (decisions §13): every change is one event whose `data` is the record as
 * REST returns it, each caller reads exactly the events on records it may read, in seq order, the
 * SQL filter and the single-event check agree, and resuming after a pruned event is EVENTS_EXPIRED.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { Caller } from '../../../src/auth/caller.ts'
import type { Event } from '../../../src/contract/contract-types.ts'
import { pruneEventLog } from '../../../src/db/repositories/outbox.ts'
import { ApiError } from '../../../src/errors.ts'
import { audienceOf, canSee, type EventAudience } from '../../../src/events/event-visibility.ts'
import { visibleEventsAfter } from '../../../src/events/events.repository.ts'
import { bearer, build } from '../../helper.ts'

const caller = (userId: number, scopes: string[]): Caller => ({
  subject: String(userId),
  userId,
  scopes: new Set(scopes),
  admin: scopes.includes('admin'),
  expiresAt: Date.now() + 3_600_000,
})
const ada = caller(1, ['admin'])
const grace = caller(2, ['orders:read', 'orders:write', 'articles:write'])
const alan = caller(3, ['orders:read', 'orders:write', 'articles:write'])
/** A valid token without orders:read: articles and comments only, not even its own orders. */
const katherine = caller(4, ['orders:write'])

/** Waits until the relay has numbered `count` events after `after` (the relay runs on commit, asynchronously). */
async function relayed(app: FastifyInstance, after: number, count: number): Promise<Event[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const read = await app.services.events.readAfter(audienceOf(ada), after, { limit: 100 })
    if (read.events.length >= count) return read.events
    await sleep(25)
  }
  throw new Error(`the relay did not number ${count} events`)
}

async function scenario(app: FastifyInstance) {
  const start = (await app.services.events.readAfter(audienceOf(ada), 0, { limit: 100 })).events.at(-1)?.id ?? '0'
  const post = async (headers: Record<string, string>, url: string, payload: object) => {
    const response = await app.inject({ method: 'POST', url, headers, payload })
    if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  const graceOrder = await post(bearer(2), '/api/v1/orders', { items: [{ sku: 'KB-101', qty: 1 }] })
  const alanOrder = await post(bearer(3), '/api/v1/orders', { items: [{ sku: 'KB-101', qty: 2 }] })
  await post(bearer(2), `/api/v1/orders/${graceOrder.id}/payment`, {})
  const article = await post(bearer(2, 'articles:write'), '/api/v1/articles', { title: 'Events', body: 'One log.' })
  const comment = await post(bearer(4, 'articles:write'), `/api/v1/articles/${article.id}/comments`, { body: 'Every transport.' })
  const events = await relayed(app, Number(start), 5)
  return { start: Number(start), events, graceOrder, alanOrder, article, comment }
}

t.test('each change is one event carrying its record exactly as REST returns it, in commit order', async (t) => {
  const app = await build(t)
  const { events, graceOrder, alanOrder, article, comment } = await scenario(app)
  const admin = bearer(1, 'admin')
  const rest = async (url: string) => (await app.inject({ method: 'GET', url, headers: admin })).json()
  const paidOrder = await rest(`/api/v1/orders/${graceOrder.id}`)
  t.same(
    events.map((event) => [event.type, event.data]),
    [
      ['order.created', graceOrder],
      ['order.created', alanOrder],
      ['order.status_changed', paidOrder],
      ['article.created', await rest(`/api/v1/articles/${article.id}`)],
      ['comment.added', comment],
    ],
  )
  const ids = events.map((event) => Number(event.id))
  t.same(
    ids,
    [...ids].sort((a, b) => a - b),
    'ids increase',
  )
  t.ok(
    events.every((event) => !Number.isNaN(Date.parse(event.created_at)) && String(Number(event.id)) === event.id),
    'ids are decimal strings, created_at a timestamp',
  )
})

t.test(
  'owners see their orders, admins everything, any valid token articles and comments: SQL and single-event checks agree',
  async (t) => {
    const app = await build(t)
    const { start, events } = await scenario(app)
    const [graceCreated, alanCreated, gracePaid, articleCreated, commentAdded] = events.map((event) => event.id)
    const expected: Array<[string, Caller, Array<string | undefined>]> = [
      ['admin', ada, [graceCreated, alanCreated, gracePaid, articleCreated, commentAdded]],
      ['owner Grace', grace, [graceCreated, gracePaid, articleCreated, commentAdded]],
      ['owner Alan', alan, [alanCreated, articleCreated, commentAdded]],
      ['a token without orders:read', katherine, [articleCreated, commentAdded]],
    ]
    const rows = await visibleEventsAfter(app.db, audienceOf(ada), { after: start, types: undefined, limit: 100 })
    for (const [who, reader, ids] of expected) {
      const audience: EventAudience = audienceOf(reader)
      const read = await app.services.events.readAfter(audience, start, { limit: 100 })
      t.same(
        read.events.map((event) => event.id),
        ids,
        `${who}: the SQL filter`,
      )
      t.same(
        rows.filter((row) => canSee(audience, row.ownerId)).map((row) => String(row.seq)),
        ids,
        `${who}: the single-event check`,
      )
    }
    const ordersOnly = await app.services.events.readAfter(audienceOf(grace), start, { types: ['order.status_changed'], limit: 100 })
    t.same(
      ordersOnly.events.map((event) => event.id),
      [gracePaid],
      'types narrows',
    )
    const paged = await app.services.events.readAfter(audienceOf(ada), start, { limit: 2 })
    t.same([paged.events.length, paged.complete, String(paged.lastSeq)], [2, false, alanCreated], 'a full page is not complete')
  },
)

t.test('resuming after a pruned event is EVENTS_EXPIRED (410); after the horizon it is not', async (t) => {
  const app = await build(t)
  const { events } = await scenario(app)
  // A retention of zero prunes everything relayed so far.
  t.ok((await pruneEventLog(app.db, 0)) >= 5)
  const last = Number(events.at(-1)!.id)
  // After the first pruned event (0, the start of the log, is never expired).
  const expired = await app.services.events
    .readAfter(audienceOf(ada), Number(events[0]!.id), { limit: 10 })
    .catch((error: unknown) => error)
  t.ok(
    expired instanceof ApiError && expired.code === 'EVENTS_EXPIRED' && expired.status === 410,
    'after an event older than the retention',
  )
  const resumed = await app.services.events.readAfter(audienceOf(ada), last, { limit: 10 })
  t.same(resumed.events, [], 'after the last pruned event: nothing missed')
})
