/**
 * Global ids (decisions §13, Relay's Global Object Identification): a Node's `id` is the base64url
 * text (no padding) of `<Type>:<key>`, so that it is unique across types (User 2 and Order 2 are
 * different ids) and opaque to clients. The key is the REST id (a product's, its sku; an order's
 * line item's, its order's id and its position in the order, the key of its row). This module is
 * the only place that writes or reads one.
 *
 * Reading is strict: an id is accepted only when it is exactly what `toGlobalId` writes for a known
 * type and a canonical key, so that no two texts name one record (a cache keyed by id never holds
 * one record twice) and no text reaches another record than the one it names.
 */
import { parseRecordId } from '../../record-id.ts'

/** The types that implement Node (schema.graphql). */
export const NODE_TYPES = ['User', 'Company', 'Order', 'Product', 'Author', 'Article', 'Comment', 'Item'] as const
export type NodeType = (typeof NODE_TYPES)[number]

/** The types keyed by their REST id (a positive integer); Product is keyed by its sku, Item by its order and position. */
export type NumberKeyedNodeType = Exclude<NodeType, 'Product' | 'Item'>

/** An order's line item: its order's id and its position there (0 first), the key of its `order_items` row. */
export interface ItemKey {
  orderId: number
  position: number
}

/** A position in an order: an order holds at most 100 items (decisions §3). */
const POSITION = /^(0|[1-9][0-9]?)$/

/** A sku, as the contract's CreateProductInput and openapi.yaml's pattern allow it. */
const SKU = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

export type GlobalIdKey = { type: NumberKeyedNodeType; key: number } | { type: 'Product'; key: string } | { type: 'Item'; key: ItemKey }

function isNodeType(name: string): name is NodeType {
  return (NODE_TYPES as readonly string[]).includes(name)
}

export function toGlobalId(type: NodeType, key: number | string | ItemKey): string {
  const text = typeof key === 'object' ? `${key.orderId}:${key.position}` : key
  return Buffer.from(`${type}:${text}`, 'utf8').toString('base64url')
}

/** An item's key as its global id writes it (`<order id>:<position>`), or undefined. */
function itemKeyOf(text: string): ItemKey | undefined {
  const colon = text.indexOf(':')
  const orderId = parseRecordId(text.slice(0, colon))
  const position = text.slice(colon + 1)
  return colon < 0 || orderId === undefined || !POSITION.test(position) ? undefined : { orderId, position: Number(position) }
}

/** The type and key a global id names, or undefined when `id` is not one (a plain id included). */
export function fromGlobalId(id: string): GlobalIdKey | undefined {
  // The longest id: the longest type name, a colon and a 64-character sku; cheap to refuse early.
  if (id.length === 0 || id.length > 100 || !/^[A-Za-z0-9_-]+$/.test(id)) return undefined
  const text = Buffer.from(id, 'base64url').toString('utf8')
  const colon = text.indexOf(':')
  if (colon < 0) return undefined
  const type = text.slice(0, colon)
  const keyText = text.slice(colon + 1)
  if (!isNodeType(type)) return undefined
  let parsed: GlobalIdKey | undefined
  if (type === 'Product') {
    parsed = SKU.test(keyText) ? { type, key: keyText } : undefined
  } else if (type === 'Item') {
    const key = itemKeyOf(keyText)
    parsed = key === undefined ? undefined : { type, key }
  } else {
    const key = parseRecordId(keyText)
    parsed = key === undefined ? undefined : { type, key }
  }
  // Base64 leaves slack in the last character: only the text toGlobalId writes is this record's id.
  return parsed && toGlobalId(parsed.type, parsed.key) === id ? parsed : undefined
}
