/**
 * The one place an order's total is computed: Σ qty × unit_price, with unit prices taken from the
 * product catalog (never from the client). The GraphQL schema types `total` as Int, so a total
 * above 2^31 - 1 is refused rather than overflowing there.
 */
export const MAX_ORDER_TOTAL = 2_147_483_647

export interface RequestedItem {
  sku: string
  qty: number
}

export interface PricedItem {
  sku: string
  qty: number
  unit_price: number
}

export type PricingResult =
  | { ok: true; items: PricedItem[]; total: number }
  | { ok: false; reason: 'unknown_sku'; skus: string[] }
  | { ok: false; reason: 'total_too_large'; total: number }

export function priceItems(items: readonly RequestedItem[], catalog: ReadonlyMap<string, number>): PricingResult {
  const unknown = [...new Set(items.filter((item) => !catalog.has(item.sku)).map((item) => item.sku))]
  if (unknown.length > 0) return { ok: false, reason: 'unknown_sku', skus: unknown }
  const priced = items.map((item) => ({ sku: item.sku, qty: item.qty, unit_price: catalog.get(item.sku)! }))
  const total = priced.reduce((sum, item) => sum + item.qty * item.unit_price, 0)
  if (total > MAX_ORDER_TOTAL) return { ok: false, reason: 'total_too_large', total }
  return { ok: true, items: priced, total }
}
