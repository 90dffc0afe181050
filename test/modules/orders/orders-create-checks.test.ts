/**
 * A create's checks are a gate in its one statement and the refusal's words in the service
 * (decisions §7, "A write in one statement"): the two agree. A total above the maximum is refused
 * (422 ORDER_TOTAL_TOO_LARGE naming it) and the next one under it is written; an
 * unknown buyer is 422 UNKNOWN_USER; an unknown sku among known ones is 422 UNKNOWN_SKU naming
 * its item; a sku asked twice is priced per item. A refusal writes no order and no event, and
 * with a key it is stored and replayed.
 */
import t from 'tap'
import { bearer, build } from '../../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
/** MN-303 costs 27,900 (src/db/seed.ts): 76 of them at qty 1000 are 2,120,400,000, 77 are 2,148,300,000 > 2^31 - 1. */
const monitors = (count: number) => Array.from({ length: count }, () => ({ sku: 'MN-303', qty: 1000 }))

t.test("the statement's checks and the service's refusals agree, and a refusal writes nothing", async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const written = async () => ({
    orders: Number((await app.db.selectFrom('orders').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
    events: Number((await app.db.selectFrom('outbox').select(app.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
  })
  const post = (items: unknown, headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/api/v1/orders', headers, payload: { items } })

  const before = await written()
  const refusals = [
    { items: monitors(77), headers: grace, code: 'ORDER_TOTAL_TOO_LARGE', detail: /2148300000/ },
    { items: [{ sku: 'KB-101', qty: 1 }], headers: bearer(99, 'orders:write'), code: 'UNKNOWN_USER', detail: /user 99/ },
    {
      items: [
        { sku: 'KB-101', qty: 1 },
        { sku: 'NOPE-9', qty: 1 },
      ],
      headers: grace,
      code: 'UNKNOWN_SKU',
      detail: /"NOPE-9"/,
    },
  ]
  for (const [index, refusal] of refusals.entries()) {
    const headers = { ...refusal.headers, 'idempotency-key': `checks-${index}` }
    const first = await post(refusal.items, headers)
    t.equal(first.statusCode, 422, refusal.code)
    t.equal(first.json().code, refusal.code)
    t.match(first.json().detail, refusal.detail)
    const replayed = await post(refusal.items, headers)
    t.equal(replayed.headers['idempotent-replayed'], 'true', `${refusal.code}: stored, and replayed`)
  }
  t.same(
    (await post(refusals[2]!.items, grace)).json().errors,
    [{ in: 'body', name: '/items/1/sku', message: 'no product has sku "NOPE-9"' }],
    'the unknown sku named by its item',
  )
  t.same(await written(), before, 'no refusal wrote an order or an event')

  const largest = await post(monitors(76), grace)
  t.equal(largest.statusCode, 201, 'a total under the maximum is written')
  t.equal(largest.json().total, 2_120_400_000)
  const twice = await post(
    [
      { sku: 'KB-101', qty: 1 },
      { sku: 'KB-101', qty: 2 },
    ],
    grace,
  )
  t.same(
    twice.json().items,
    [
      { sku: 'KB-101', qty: 1, unit_price: 8900 },
      { sku: 'KB-101', qty: 2, unit_price: 8900 },
    ],
    'a sku asked twice is two items, in the order asked',
  )
  t.equal(twice.json().total, 3 * 8900)
  t.same(await written(), { orders: before.orders + 2, events: before.events + 2 }, 'each written with its event')
})
