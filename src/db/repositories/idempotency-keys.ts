/** SQL for stored idempotent outcomes (decisions §7). */
import { sql, type Transaction } from 'kysely'
import type { Database, IdempotencyKeyRow } from '../schema.ts'
import type { Executor } from '../transaction.ts'

/** What a key holds when a request claims it: its stored outcome, if a live one exists. */
export type KeyClaim =
  | { locked: false }
  | { locked: true; stored: Pick<IdempotencyKeyRow, 'request_hash' | 'status' | 'location' | 'body'> | undefined }

/**
 * Claims a key in one round trip (migration 0003's `idempotency_claim`): its transaction-scoped
 * advisory lock without waiting, then its live stored outcome, read after the lock was granted.
 * Unlocked means another request with the same key is running right now; the lock ends with the
 * transaction. Callers are digits, so `caller:key` is unambiguous.
 */
export async function claimKey(trx: Transaction<Database>, caller: string, key: string): Promise<KeyClaim> {
  const result = await sql<{ locked: boolean; request_hash: string | null; status: number | null; location: string | null; body: unknown }>`
    select * from idempotency_claim(${caller}, ${key})`.execute(trx)
  const row = result.rows[0]
  if (!row?.locked) return { locked: false }
  if (row.request_hash === null || row.status === null) return { locked: true, stored: undefined }
  return { locked: true, stored: { request_hash: row.request_hash, status: row.status, location: row.location, body: row.body } }
}

export interface StoredOutcome {
  caller: string
  key: string
  requestHash: string
  status: number
  location: string | null
  body: unknown
  ttlSeconds: number
}

/** Stores an outcome, replacing an expired one under the same key. */
export async function storeOutcome(trx: Transaction<Database>, outcome: StoredOutcome): Promise<void> {
  const values = {
    caller: outcome.caller,
    key: outcome.key,
    request_hash: outcome.requestHash,
    status: outcome.status,
    location: outcome.location,
    body: JSON.stringify(outcome.body ?? null),
    expires_at: sql<Date>`now() + make_interval(secs => ${outcome.ttlSeconds})`,
  }
  await trx
    .insertInto('idempotency_keys')
    .values(values)
    .onConflict((conflict) =>
      conflict.columns(['caller', 'key']).doUpdateSet({
        request_hash: values.request_hash,
        status: values.status,
        location: values.location,
        body: values.body,
        expires_at: values.expires_at,
      }),
    )
    .execute()
}

export async function deleteExpiredOutcomes(db: Executor): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', sql<Date>`now()`).executeTakeFirst()
  return Number(result.numDeletedRows)
}
