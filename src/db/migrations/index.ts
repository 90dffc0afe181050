import type { Migration } from 'kysely/migration'
import * as initialSchema from './0001-initial-schema.ts'
import * as outboxDeliveryOrder from './0002-outbox-delivery-order.ts'
import * as idempotencyClaim from './0003-idempotency-claim.ts'
import * as eventLog from './0004-event-log.ts'
import * as webhooks from './0005-webhooks.ts'
import * as idempotencyReplay from './0006-idempotency-replay.ts'
import * as webhookAttempts from './0007-webhook-attempts.ts'
import * as eventStreamTickets from './0008-event-stream-tickets.ts'
import * as rowCounts from './0009-row-counts.ts'
import * as listIndexes from './0010-list-indexes.ts'

/**
 * Every migration, in order. Listed here rather than read from the folder so that the compiled
 * build and the TypeScript loader see the same set.
 */
export const migrations: Record<string, Migration> = {
  '0001-initial-schema': initialSchema,
  '0002-outbox-delivery-order': outboxDeliveryOrder,
  '0003-idempotency-claim': idempotencyClaim,
  '0004-event-log': eventLog,
  '0005-webhooks': webhooks,
  '0006-idempotency-replay': idempotencyReplay,
  '0007-webhook-attempts': webhookAttempts,
  '0008-event-stream-tickets': eventStreamTickets,
  '0009-row-counts': rowCounts,
  '0010-list-indexes': listIndexes,
}
