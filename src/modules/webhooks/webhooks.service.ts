/**
 * Webhook endpoints and their delivery log (decisions §13), for a caller: its own endpoints, or
 * every endpoint for an admin; another caller's endpoint is 404, as if it did not exist. What an
 * endpoint receives is what its owner may read: it keeps the owner's admin flag and scopes as they
 * were at creation, and the worker reads the log through the event core's visibility rule.
 */
import { randomBytes } from 'node:crypto'
import type { Caller } from '../../auth/caller.ts'
import type { AppConfig } from '../../config.ts'
import type {
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointCreated,
} from '../../contract/contract-types.ts'
import type { WebhookDeliveryAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from '../../db/schema.ts'
import { notFound } from '../../errors.ts'
import { resumePosition } from '../../pagination/cursor.ts'
import type { Page } from '../../pagination/page.ts'
import { parseEventTypes } from '../../events/events.service.ts'
import type { ServiceDependencies } from '../service-dependencies.ts'
import { checkTargetUrl, resolveTarget } from './webhook-target.ts'
import {
  deleteEndpoint,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listAttempts,
  listDeliveries,
  listEndpoints,
  requeueDelivery,
} from './webhooks.repository.ts'

const ENDPOINTS = 'webhook-endpoints'
const DELIVERIES = 'webhook-deliveries'
const ATTEMPTS = 'webhook-delivery-attempts'

function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    types: row.types ? (parseEventTypes(row.types.join(','), 'body', 'types') ?? null) : null,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    owner_id: row.owner_id,
    created_at: row.created_at.toISOString(),
  }
}

function toDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  // Written by the worker from a public event, so always one of the contract's types.
  const eventType = parseEventTypes(row.event_type, 'body', 'event_type')?.[0]
  if (!eventType) throw new Error(`delivery ${row.id} has no event type`)
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: String(row.event_seq),
    event_type: eventType,
    webhook_id: row.webhook_id,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at.toISOString(),
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
    last_response_status: row.last_response_status,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
  }
}

function toAttempt(row: WebhookDeliveryAttemptRow): WebhookDeliveryAttempt {
  return {
    id: row.id,
    delivery_id: row.delivery_id,
    attempted_at: row.attempted_at.toISOString(),
    duration_ms: row.duration_ms,
    response_status: row.response_status,
    error: row.error,
    response_body: row.response_body,
  }
}

export function createWebhooksService({
  db,
  cursors,
  config,
}: Pick<ServiceDependencies, 'db' | 'cursors'> & { config: AppConfig['webhooks'] }) {
  /** The endpoint if the caller may manage it; 404 otherwise (its existence is not disclosed). */
  async function endpointOf(caller: Caller, id: number): Promise<WebhookEndpointRow> {
    const row = await findEndpoint(db, id)
    if (!row || (!caller.admin && row.owner_id !== caller.userId)) throw notFound(`Webhook endpoint ${id}`)
    return row
  }

  return {
    /** POST /webhook-endpoints: the URL is checked (form and resolved addresses) before anything is stored. */
    async create(caller: Caller, body: WebhookEndpointCreate): Promise<WebhookEndpointCreated> {
      const url = checkTargetUrl(body.url, config.allowPrivate)
      await resolveTarget(url, config.allowPrivate)
      const types = body.types ? (parseEventTypes(body.types.join(','), 'body', 'types') ?? null) : null
      const secret = `whsec_${randomBytes(24).toString('base64')}`
      const row = await insertEndpoint(db, {
        ownerId: caller.userId,
        ownerAdmin: caller.admin,
        ownerScopes: [...caller.scopes],
        url: body.url,
        secret,
        types,
      })
      return { ...toEndpoint(row), secret }
    },

    async list(caller: Caller, query: { cursor?: string | undefined; limit: number }): Promise<Page<WebhookEndpoint>> {
      const position = resumePosition(cursors, ENDPOINTS, query.cursor, { sort: undefined, filter: {} }, { sort: 'id' })
      const ownerId = caller.admin ? undefined : caller.userId
      const afterId = position.after ? Number(position.after[1]) : 0
      const { rows, total } = await listEndpoints(db, { ownerId, afterId, limit: query.limit + 1 })
      const page = rows.slice(0, query.limit)
      const last = page.at(-1)
      const nextCursor =
        rows.length > query.limit && last ? cursors.encode({ list: ENDPOINTS, sort: 'id', filter: {}, key: [last.id, last.id] }) : null
      return { data: page.map(toEndpoint), total, nextCursor }
    },

    async get(caller: Caller, id: number): Promise<WebhookEndpoint> {
      return toEndpoint(await endpointOf(caller, id))
    },

    async remove(caller: Caller, id: number): Promise<void> {
      await endpointOf(caller, id)
      if (!(await deleteEndpoint(db, id))) throw notFound(`Webhook endpoint ${id}`)
    },

    /** The endpoint's deliveries, newest first (envelope B). */
    async listDeliveries(
      caller: Caller,
      id: number,
      query: { cursor?: string | undefined; limit: number },
    ): Promise<Page<WebhookDelivery>> {
      await endpointOf(caller, id)
      const position = resumePosition(cursors, DELIVERIES, query.cursor, { sort: undefined, filter: { endpoint: id } }, { sort: '-id' })
      const beforeId = position.after ? Number(position.after[1]) : undefined
      const rows = await listDeliveries(db, { endpointId: id, beforeId, limit: query.limit + 1 })
      const page = rows.slice(0, query.limit)
      const last = page.at(-1)
      const nextCursor =
        rows.length > query.limit && last
          ? cursors.encode({ list: DELIVERIES, sort: '-id', filter: { endpoint: id }, key: [last.id, last.id] })
          : null
      return { data: page.map(toDelivery), total: page.length, nextCursor }
    },

    /** A delivery's attempts, oldest first (envelope B); 404 for a delivery the endpoint does not have. */
    async listAttempts(
      caller: Caller,
      id: number,
      deliveryId: number,
      query: { cursor?: string | undefined; limit: number },
    ): Promise<Page<WebhookDeliveryAttempt>> {
      await endpointOf(caller, id)
      if (!(await findDelivery(db, id, deliveryId))) throw notFound(`Delivery ${deliveryId} of webhook endpoint ${id}`)
      const filter = { endpoint: id, delivery: deliveryId }
      const position = resumePosition(cursors, ATTEMPTS, query.cursor, { sort: undefined, filter }, { sort: 'id' })
      const afterId = position.after ? Number(position.after[1]) : 0
      const rows = await listAttempts(db, { deliveryId, afterId, limit: query.limit + 1 })
      const page = rows.slice(0, query.limit)
      const last = page.at(-1)
      const nextCursor =
        rows.length > query.limit && last ? cursors.encode({ list: ATTEMPTS, sort: 'id', filter, key: [last.id, last.id] }) : null
      return { data: page.map(toAttempt), total: page.length, nextCursor }
    },

    /** POST …/deliveries/{id}/retry: due now, sent once it is the endpoint's oldest pending delivery. */
    async retry(caller: Caller, id: number, deliveryId: number): Promise<WebhookDelivery> {
      await endpointOf(caller, id)
      const row = await db.transaction().execute((trx) => requeueDelivery(trx, id, deliveryId))
      if (!row) throw notFound(`Delivery ${deliveryId} of webhook endpoint ${id}`)
      return toDelivery(row)
    },
  }
}

export type WebhooksService = ReturnType<typeof createWebhooksService>
