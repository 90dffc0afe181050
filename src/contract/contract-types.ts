/**
 * The contract's component schemas as TypeScript types, named as openapi.yaml names them: aliases
 * of openapi-typescript's `components` (src/generated/openapi/paths.ts), so a shape is written once.
 */
import type { components } from '../generated/openapi/paths.ts'

type Schemas = components['schemas']

export type Order = Schemas['Order']
export type OrderItem = Schemas['OrderItem']
export type OrderStatus = Schemas['OrderStatus']
export type Product = Schemas['Product']
export type User = Schemas['User']
export type Article = Schemas['Article']
export type Comment = Schemas['Comment']
export type Event = Schemas['Event']
export type EventType = Event['type']
export type WebhookEndpoint = Schemas['WebhookEndpoint']
export type WebhookEndpointCreate = Schemas['WebhookEndpointCreate']
export type WebhookEndpointCreated = Schemas['WebhookEndpointCreated']
export type WebhookDelivery = Schemas['WebhookDelivery']
export type WebhookDeliveryAttempt = Schemas['WebhookDeliveryAttempt']
export type EventStreamTicket = Schemas['EventStreamTicket']
