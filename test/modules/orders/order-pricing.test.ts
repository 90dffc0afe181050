// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/** Unit tests of the pricing rule: totals from catalog prices only, unknown skus named, overflow refused. */
import t from 'tap'
import { MAX_ORDER_TOTAL, priceItems } from '../../../src/modules/orders/order-pricing.ts'

const catalog = new Map([
  ['KB-101', 9500],
  ['MS-202', 2500],
])

t.test('the total is Σ qty × catalog price, items keep their order and sequence', async (t) => {
  t.same(
    priceItems(
      [
        { sku: 'MS-202', qty: 2 },
        { sku: 'KB-101', qty: 1 },
        { sku: 'MS-202', qty: 1 },
      ],
      catalog,
    ),
    {
      ok: true,
      items: [
        { sku: 'MS-202', qty: 2, unit_price: 2500 },
        { sku: 'KB-101', qty: 1, unit_price: 9500 },
        { sku: 'MS-202', qty: 1, unit_price: 2500 },
      ],
      total: 17000,
    },
  )
})

t.test('an order without items costs nothing', async (t) => {
  t.same(priceItems([], catalog), { ok: true, items: [], total: 0 })
})

t.test('unknown skus are all named, each once, before any total is computed', async (t) => {
  t.same(
    priceItems(
      [
        { sku: 'NOPE', qty: 1 },
        { sku: 'KB-101', qty: 1 },
        { sku: 'NOPE', qty: 3 },
        { sku: 'GONE', qty: 1 },
      ],
      catalog,
    ),
    { ok: false, reason: 'unknown_sku', skus: ['NOPE', 'GONE'] },
  )
})

t.test('a total up to 2^31 - 1 is accepted; one above is refused with the total it would have been', async (t) => {
  const expensive = new Map([['GOLD', MAX_ORDER_TOTAL]])
  t.match(priceItems([{ sku: 'GOLD', qty: 1 }], expensive), { ok: true, total: MAX_ORDER_TOTAL })
  t.same(priceItems([{ sku: 'GOLD', qty: 2 }], expensive), { ok: false, reason: 'total_too_large', total: 2 * MAX_ORDER_TOTAL })
})
