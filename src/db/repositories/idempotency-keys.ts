/** SQL for stored idempotent outcomes (decisions §7). */
import { type RawBuilder, sql, type Transaction } from 'kysely'
import type { Database } from '../schema.ts'
import type { Executor } from '../executor.ts'
import { compiledStatement } from '../compiled-statement.ts'
import { PRUNE_BATCH } from '../prune-in-batches.ts'

/** An outcome as a key holds it (src/db/write.ts says what `status` and `body` mean). */
export interface StoredOutcome {
  caller: string
  key: string
  requestHash: string
  status: number
  body: unknown
  ttlSeconds: number
}

/**
 * What a key holds when a request claims it: whether its lock was granted, and its live stored
 * outcome, if one exists. A finished key's outcome is there whether or not the lock was granted.
 */
export interface KeyClaim {
  locked: boolean
  stored: Pick<StoredOutcome, 'requestHash' | 'status' | 'body'> | undefined
}

/**
 * Claims a key in one round trip (migrations 0003 and 0006, `idempotency_claim`): its
 * transaction-scoped advisory lock without waiting, then its live stored outcome, read after the
 * lock was granted or refused. Unlocked with no outcome means a first request with the same key is
 * running right now; unlocked with an outcome, the key is finished and another replay holds the
 * lock for its read. The lock ends with the transaction. Callers are digits, so `caller:key` is
 * unambiguous. The function also returns the `location` older instances stored; nothing reads it.
 */
const claim = compiledStatement<{
  locked: boolean
  request_hash: string | null
  status: number | null
  body: unknown
}>('select locked, request_hash, status, body from idempotency_claim($1, $2)')

export async function claimKey(trx: Transaction<Database>, caller: string, key: string): Promise<KeyClaim> {
  const [row] = await claim(trx, [caller, key])
  const locked = row?.locked === true
  if (!row || row.request_hash === null || row.status === null) return { locked, stored: undefined }
  return { locked, stored: { requestHash: row.request_hash, status: row.status, body: row.body } }
}

/**
 * An outcome's row, replacing an expired one under the same key, as a statement fragment: stored
 * alone (storeOutcome), or inside a write's own statement as a CTE, which saves the write a round
 * trip (src/db/write.ts). `location` is left null: a transport builds its answer from the
 * stored result.
 */
export function outcomeRecord(outcome: StoredOutcome): RawBuilder<unknown> {
  return sql`
  insert into idempotency_keys (caller, key, request_hash, status, body, expires_at)
  values (${outcome.caller}, ${outcome.key}, ${outcome.requestHash}, ${outcome.status}, ${JSON.stringify(outcome.body ?? null)},
    now() + make_interval(secs => ${outcome.ttlSeconds}))
  on conflict (caller, key) do update set request_hash = excluded.request_hash, status = excluded.status,
    location = null, body = excluded.body, expires_at = excluded.expires_at`
}

export async function storeOutcome(trx: Transaction<Database>, outcome: StoredOutcome): Promise<void> {
  await outcomeRecord(outcome).execute(trx)
}

/** Deletes up to `limit` expired outcomes, the longest expired first (one batch of pruneInBatches); how many it deleted. */
export async function deleteExpiredOutcomes(db: Executor, limit = PRUNE_BATCH): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where((eb) =>
      eb(
        eb.refTuple('caller', 'key'),
        'in',
        eb
          .selectFrom('idempotency_keys as expired')
          .select(['expired.caller', 'expired.key'])
          .where('expired.expires_at', '<=', sql<Date>`now()`)
          .orderBy('expired.expires_at')
          .limit(limit)
          .forUpdate()
          .skipLocked()
          .$asTuple('caller', 'key'),
      ),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
