/** SQL for stored idempotent outcomes (decisions §7). */
import { sql, type Transaction } from 'kysely'
import type { Database, IdempotencyKeyRow } from '../schema.ts'
import type { Executor } from '../transaction.ts'
import { compiledStatement } from '../compiled-statement.ts'

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
const claim = compiledStatement<{
  locked: boolean
  request_hash: string | null
  status: number | null
  location: string | null
  body: unknown
}>('select * from idempotency_claim($1, $2)')

export async function claimKey(trx: Transaction<Database>, caller: string, key: string): Promise<KeyClaim> {
  const [row] = await claim(trx, [caller, key])
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

/** Stores an outcome, replacing an expired one under the same key; its text written once (a write's hot path). */
const outcomeUpsert = compiledStatement<never>(`
  insert into idempotency_keys (caller, key, request_hash, status, location, body, expires_at)
  values ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
  on conflict (caller, key) do update set request_hash = excluded.request_hash, status = excluded.status,
    location = excluded.location, body = excluded.body, expires_at = excluded.expires_at`)

export async function storeOutcome(trx: Transaction<Database>, outcome: StoredOutcome): Promise<void> {
  await outcomeUpsert(trx, [
    outcome.caller,
    outcome.key,
    outcome.requestHash,
    outcome.status,
    outcome.location,
    JSON.stringify(outcome.body ?? null),
    outcome.ttlSeconds,
  ])
}

export async function deleteExpiredOutcomes(db: Executor): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', sql<Date>`now()`).executeTakeFirst()
  return Number(result.numDeletedRows)
}
