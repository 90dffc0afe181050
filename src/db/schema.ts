/**
 * Table types for Kysely. Only repositories (src/modules/*\/*.repository.ts) and src/db/ use them;
 * services map rows to API types and never return a row type.
 */
import type { ColumnType, Generated, Selectable } from 'kysely'
// The contract's order status is the column's type: one list of states, written in openapi.yaml.
import type { OrderStatus } from '../contract/contract-types.ts'

type CreatedAt = ColumnType<Date, Date | string | undefined, never>
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>

export interface CompanyTable {
  id: Generated<number>
  name: string
}

export interface UserTable {
  id: Generated<number>
  name: string
  company_id: number | null
  created_at: CreatedAt
}

export interface ProductTable {
  sku: string
  name: string
  price: number
  created_at: CreatedAt
}

export interface OrderTable {
  id: Generated<number>
  user_id: number
  status: OrderStatus
  total: number
  created_at: CreatedAt
  updated_at: UpdatedAt
}

export interface OrderItemTable {
  order_id: number
  /** Keeps the items in the order the client sent them. */
  position: number
  sku: string
  qty: number
  unit_price: number
}

export interface ArticleTable {
  id: Generated<number>
  author_id: number
  title: string
  body: string
  created_at: CreatedAt
  updated_at: UpdatedAt
}

export interface CommentTable {
  id: Generated<number>
  article_id: number
  author_id: number
  body: string
  created_at: CreatedAt
}

export interface IdempotencyKeyTable {
  caller: string
  key: string
  /** SHA-256 of method, path and body: the same key with another request is 422. */
  request_hash: string
  /** The outcome's kind (src/db/write.ts): 201 a creation, 200 a change, a refusal's 4xx. */
  status: number
  /** Written by older versions only (REST's Location); nothing reads it. */
  location: string | null
  body: ColumnType<unknown, string, string>
  created_at: CreatedAt
  expires_at: ColumnType<Date, Date | string, Date | string>
}

export interface OutboxTable {
  id: Generated<number>
  topic: string
  payload: ColumnType<unknown, string, string>
  created_at: CreatedAt
  published_at: ColumnType<Date | null, never, Date | string | null>
  /** The delivery order, given by the relay; null until relayed. */
  seq: ColumnType<number | null, never, number | null>
  /** The one user besides admins who may read the event, or null when any valid token may (src/events/event-visibility.ts). */
  owner_id: number | null
}

/** One row: the highest seq pruned from the event log (migration 0004). */
export interface EventLogHorizonTable {
  singleton: ColumnType<boolean, never, never>
  pruned_through: ColumnType<number, never, number>
}

/** A webhook target (migration 0005); it keeps its owner's admin flag and scopes for the visibility rule. */
export interface WebhookEndpointTable {
  id: Generated<number>
  owner_id: number
  owner_admin: boolean
  owner_scopes: string[]
  url: string
  secret: string
  /** The event types it receives; null: all. */
  types: string[] | null
  enabled: Generated<boolean>
  disabled_reason: string | null
  /** The event log has been fanned out into deliveries up to this seq. */
  after_seq: number
  lease_owner: string | null
  lease_until: Date | null
  created_at: CreatedAt
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed'

/** One event for one endpoint (migration 0005). */
export interface WebhookDeliveryTable {
  id: Generated<number>
  endpoint_id: number
  event_seq: number
  event_type: string
  /** The `webhook-id` header of each of its attempts: random, so unique across databases (migration 0007). */
  webhook_id: string
  /** The public event as sent, byte for byte the same on every attempt (it is signed). */
  payload: string
  status: Generated<WebhookDeliveryStatus>
  attempts: Generated<number>
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>
  first_attempt_at: Date | null
  last_attempt_at: Date | null
  last_response_status: number | null
  last_error: string | null
  created_at: CreatedAt
}

/** One attempt of one delivery (migration 0007). */
export interface WebhookDeliveryAttemptTable {
  id: Generated<number>
  delivery_id: number
  attempted_at: Date
  duration_ms: number
  /** The answer's status; null when none came (the error says why). */
  response_status: number | null
  error: string | null
  /** The first bytes of the receiver's answer, as text. */
  response_body: string | null
}

/** A single-use credential for opening an event stream (migration 0008); the caller as its token established it. */
export interface EventStreamTicketTable {
  /** SHA-256 of the ticket, hex: the ticket itself is never stored. */
  ticket_hash: string
  subject: string
  user_id: number
  admin: boolean
  /** The token's scopes, space-separated as in its `scope` claim. */
  scopes: string
  token_expires_at: Date
  expires_at: Date
}

export interface Database {
  companies: CompanyTable
  users: UserTable
  products: ProductTable
  orders: OrderTable
  order_items: OrderItemTable
  articles: ArticleTable
  comments: CommentTable
  idempotency_keys: IdempotencyKeyTable
  outbox: OutboxTable
  event_log_horizon: EventLogHorizonTable
  webhook_endpoints: WebhookEndpointTable
  webhook_deliveries: WebhookDeliveryTable
  webhook_delivery_attempts: WebhookDeliveryAttemptTable
  event_stream_tickets: EventStreamTicketTable
}

export type CompanyRow = Selectable<CompanyTable>
export type UserRow = Selectable<UserTable>
export type ProductRow = Selectable<ProductTable>
export type OrderRow = Selectable<OrderTable>
export type OrderItemRow = Selectable<OrderItemTable>
export type ArticleRow = Selectable<ArticleTable>
export type CommentRow = Selectable<CommentTable>
export type WebhookEndpointRow = Selectable<WebhookEndpointTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>
export type WebhookDeliveryAttemptRow = Selectable<WebhookDeliveryAttemptTable>
export type EventStreamTicketRow = Selectable<EventStreamTicketTable>
