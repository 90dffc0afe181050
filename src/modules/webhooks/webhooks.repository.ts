/** All SQL of webhooks: endpoints, deliveries, and the leases by which instances share the work. */
import { sql } from 'kysely'
import { anyInteger } from '../../db/any-of.ts'
import { countedRows, readPage } from '../../db/row-counts.ts'
import type { Executor } from '../../db/executor.ts'
import type { WebhookDeliveryAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from '../../db/schema.ts'

export async function insertEndpoint(
  db: Executor,
  values: { ownerId: number; ownerAdmin: boolean; ownerScopes: string[]; url: string; secret: string; types: string[] | null },
): Promise<WebhookEndpointRow> {
  // An endpoint receives what happens from its creation on: it starts after the last relayed event.
  return db
    .insertInto('webhook_endpoints')
    .values({
      owner_id: values.ownerId,
      owner_admin: values.ownerAdmin,
      owner_scopes: values.ownerScopes,
      url: values.url,
      secret: values.secret,
      types: values.types,
      after_seq: sql<number>`(select coalesce(max(seq), 0) from outbox)`,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * Deletes up to `limit` deliveries made longer than `retentionMs` ago that nothing will attempt
 * again: delivered, given up, or queued behind an endpoint that was disabled (its owner had the
 * retention to re-enable it); their attempts go with them (ON DELETE CASCADE). A delivery still
 * pending for an enabled endpoint is kept whatever its age: it is still to be delivered. One batch
 * of pruneInBatches (decisions §17, WEBHOOK_DELIVERY_RETENTION); how many it deleted.
 */
export async function pruneDeliveries(db: Executor, retentionMs: number, limit: number): Promise<number> {
  const result = await sql`
    delete from webhook_deliveries where id in (
      select d.id from webhook_deliveries as d join webhook_endpoints as e on e.id = d.endpoint_id
      where d.created_at < now() - make_interval(secs => ${retentionMs / 1000}) and (d.status <> 'pending' or not e.enabled)
      order by d.id limit ${limit}
      for update of d skip locked)`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/**
 * Endpoints by id, oldest first, after `afterId`; of `ownerId` only when given; with how many
 * there are in all (of that owner), read in the same statement (decisions §17).
 */
export async function listEndpoints(
  db: Executor,
  query: { ownerId: number | undefined; afterId: number; limit: number },
): Promise<{ rows: WebhookEndpointRow[]; total: number }> {
  let select = db.selectFrom('webhook_endpoints').selectAll().where('id', '>', query.afterId)
  if (query.ownerId !== undefined) select = select.where('owner_id', '=', query.ownerId)
  const { rows, total } = await readPage(
    db,
    select.orderBy('id').limit(query.limit),
    'id',
    countedRows('webhook_endpoints', { ownerId: query.ownerId }),
  )
  return { rows, total: total ?? 0 }
}

export async function findEndpoint(db: Executor, id: number): Promise<WebhookEndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function deleteEndpoint(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** An endpoint's deliveries, newest first, before delivery `beforeId` when given. */
export async function listDeliveries(
  db: Executor,
  query: { endpointId: number; beforeId: number | undefined; limit: number },
): Promise<WebhookDeliveryRow[]> {
  let select = db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', query.endpointId)
  if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId)
  return select.orderBy('id', 'desc').limit(query.limit).execute()
}

/**
 * Queues a delivery again, due now, and enables its endpoint (a disabled endpoint's head delivery
 * is the one that failed). Undefined when the endpoint has no such delivery.
 */
export async function requeueDelivery(trx: Executor, endpointId: number, deliveryId: number): Promise<WebhookDeliveryRow | undefined> {
  const row = await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: sql<Date>`now()`, first_attempt_at: null })
    .where('id', '=', deliveryId)
    .where('endpoint_id', '=', endpointId)
    .returningAll()
    .executeTakeFirst()
  if (row) {
    await trx.updateTable('webhook_endpoints').set({ enabled: true, disabled_reason: null }).where('id', '=', endpointId).execute()
  }
  return row
}

// ---- The worker's statements -----------------------------------------------------------------

/**
 * Leases up to `limit` enabled endpoints that have work: events past their fan-out position, or a
 * head delivery (their oldest pending one) that is due. FOR UPDATE SKIP LOCKED: instances claiming
 * at the same moment take different endpoints, and an endpoint whose lease runs is not taken at all.
 * The least recently leased go first, so that no endpoint starves. An endpoint this owner leased
 * and is not working on (`busy` lists those it is) is its own again at once: a lease whose release
 * failed (the database was away) does not hold its endpoint up until it expires. One it is working
 * on is never claimed again, even past its lease (a serve that outlived it): one endpoint, one
 * attempt at a time.
 */
export async function claimEndpoints(
  db: Executor,
  owner: string,
  leaseMs: number,
  limit: number,
  busy: readonly number[],
): Promise<WebhookEndpointRow[]> {
  const result = await sql<WebhookEndpointRow>`
    update webhook_endpoints set lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    where id in (
      select e.id from webhook_endpoints e
      where e.enabled and not (e.id = ${anyInteger(busy)})
        and (e.lease_until is null or e.lease_until < now() or e.lease_owner = ${owner})
        and (
          e.after_seq < (select coalesce(max(seq), 0) from outbox)
          or (select d.next_attempt_at from webhook_deliveries d
              where d.endpoint_id = e.id and d.status = 'pending' order by d.event_seq limit 1) <= now()
        )
      order by e.lease_until nulls first, e.id
      limit ${limit}
      for update skip locked
    )
    returning *`.execute(db)
  return result.rows.map((row) => ({ ...row, after_seq: Number(row.after_seq) }))
}

/** Extends a lease this owner holds; false when it lost it (expired and taken, or the endpoint deleted or disabled). */
export async function renewLease(db: Executor, endpointId: number, owner: string, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable('webhook_endpoints')
    .set({ lease_until: sql<Date>`now() + make_interval(secs => ${leaseMs / 1000})` })
    .where('id', '=', endpointId)
    .where('lease_owner', '=', owner)
    .where('enabled', '=', true)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function releaseLease(db: Executor, endpointId: number, owner: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ lease_owner: null, lease_until: null })
    .where('id', '=', endpointId)
    .where('lease_owner', '=', owner)
    .execute()
}

/**
 * Adds the deliveries of `events` and moves the endpoint's fan-out position to `afterSeq`, if this
 * owner still holds its lease (false otherwise, and nothing changes: call it in a transaction).
 */
export async function fanOut(
  trx: Executor,
  endpointId: number,
  owner: string,
  events: Array<{ seq: number; type: string; webhookId: string; payload: string }>,
  afterSeq: number,
): Promise<boolean> {
  const moved = await trx
    .updateTable('webhook_endpoints')
    .set({ after_seq: afterSeq })
    .where('id', '=', endpointId)
    .where('lease_owner', '=', owner)
    .executeTakeFirst()
  if (Number(moved.numUpdatedRows) === 0) return false
  if (events.length > 0) {
    await trx
      .insertInto('webhook_deliveries')
      .values(
        events.map((event) => ({
          endpoint_id: endpointId,
          event_seq: event.seq,
          event_type: event.type,
          webhook_id: event.webhookId,
          payload: event.payload,
        })),
      )
      .onConflict((oc) => oc.columns(['endpoint_id', 'event_seq']).doNothing())
      .execute()
  }
  return true
}

/** The endpoint's oldest pending deliveries, in seq order: only the first may be attempted, then the next. */
export async function pendingDeliveries(db: Executor, endpointId: number, limit: number): Promise<WebhookDeliveryRow[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .orderBy('event_seq')
    .limit(limit)
    .execute()
  return rows.map((row) => ({ ...row, event_seq: Number(row.event_seq) }))
}

export interface AttemptOutcome {
  /** The answer's status, when there was one. */
  responseStatus: number | null
  error: string | null
  /** When the attempt started: the first attempt starts the give-up clock. */
  attemptedAt: Date
  durationMs: number
  /** The first bytes of the answer, when there was one. */
  responseBody: string | null
}

/** Adds the attempt to the delivery's attempt log. */
async function insertAttempt(db: Executor, deliveryId: number, outcome: AttemptOutcome): Promise<void> {
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      delivery_id: deliveryId,
      attempted_at: outcome.attemptedAt,
      duration_ms: outcome.durationMs,
      response_status: outcome.responseStatus,
      error: outcome.error,
      response_body: outcome.responseBody,
    })
    .execute()
}

/** A delivery's attempts, oldest first, after attempt `afterId`. */
export async function listAttempts(
  db: Executor,
  query: { deliveryId: number; afterId: number; limit: number },
): Promise<WebhookDeliveryAttemptRow[]> {
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', query.deliveryId)
    .where('id', '>', query.afterId)
    .orderBy('id')
    .limit(query.limit)
    .execute()
}

/** The endpoint's delivery `deliveryId`, if it has one. */
export async function findDelivery(db: Executor, endpointId: number, deliveryId: number): Promise<WebhookDeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirst()
}

/** Records a 2xx, and the attempt (call it in a transaction). */
export async function recordSuccess(trx: Executor, deliveryId: number, outcome: AttemptOutcome): Promise<void> {
  await insertAttempt(trx, deliveryId, outcome)
  await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'succeeded',
      attempts: eb('attempts', '+', 1),
      first_attempt_at: eb.fn.coalesce('first_attempt_at', sql<Date>`${outcome.attemptedAt}`),
      last_attempt_at: outcome.attemptedAt,
      last_response_status: outcome.responseStatus,
      last_error: null,
    }))
    .where('id', '=', deliveryId)
    .execute()
}

/**
 * Records a failed attempt: retried at `nextAttemptAt`, or given up (`undefined`): the delivery is
 * failed and its endpoint disabled, in one transaction (pass one).
 */
export async function recordFailure(
  trx: Executor,
  delivery: { id: number; endpointId: number },
  outcome: AttemptOutcome,
  nextAttemptAt: Date | undefined,
): Promise<void> {
  await insertAttempt(trx, delivery.id, outcome)
  await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: nextAttemptAt ? 'pending' : 'failed',
      attempts: eb('attempts', '+', 1),
      first_attempt_at: eb.fn.coalesce('first_attempt_at', sql<Date>`${outcome.attemptedAt}`),
      last_attempt_at: outcome.attemptedAt,
      last_response_status: outcome.responseStatus,
      last_error: outcome.error,
      ...(nextAttemptAt ? { next_attempt_at: nextAttemptAt } : {}),
    }))
    .where('id', '=', delivery.id)
    .execute()
  if (!nextAttemptAt) {
    await trx
      .updateTable('webhook_endpoints')
      .set({ enabled: false, disabled_reason: `delivery ${delivery.id} kept failing: ${outcome.error ?? 'no 2xx answer'}` })
      .where('id', '=', delivery.endpointId)
      .execute()
  }
}
