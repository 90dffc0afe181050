/** SQL for stored idempotent outcomes (decisions §7). */
import { sql, type Transaction } from 'kysely'
import type { Database, IdempotencyKeyRow } from '../schema.ts'
import type { Executor } from '../transaction.ts'

/**
 * Takes the key's transaction-scoped advisory lock without waiting (callers are digits, so
 * `caller:key` is unambiguous). False means another request
 * with the same key is running right now. The lock ends with the transaction.
 */
export async function tryLockKey(trx: Transaction<Database>, caller: string, key: string): Promise<boolean> {
  const result = await sql<{ locked: boolean }>`
    select pg_try_advisory_xact_lock(hashtextextended(${`${caller}:${key}`}, 7)) as locked`.execute(trx)
  return result.rows[0]?.locked === true
}

export async function findLiveOutcome(trx: Transaction<Database>, caller: string, key: string): Promise<IdempotencyKeyRow | undefined> {
  return trx
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('caller', '=', caller)
    .where('key', '=', key)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst()
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
