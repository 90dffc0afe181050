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
  return keyClaimOf(row)
}

/** A claim function's row, or none, as what the key holds. */
function keyClaimOf(row: { locked: boolean; request_hash: string | null; status: number | null; body: unknown } | undefined): KeyClaim {
  const locked = row?.locked === true
  if (!row || row.request_hash === null || row.status === null) return { locked, stored: undefined }
  return { locked, stored: { requestHash: row.request_hash, status: row.status, body: row.body } }
}

/** What a keyed write's one statement claims with: the caller, the key and the request's hash. */
export interface KeyRequest {
  caller: string
  key: string
  requestHash: string
}

/**
 * The claim as the first steps (CTEs) of a write that is one statement (src/db/write.ts): the
 * request's values, bound once (`request`), and the claim function's one row (`claim`), so that
 * the key's lock is taken inside the statement and held to its end, and the live stored outcome is
 * read after the lock was granted or refused (the function's own snapshot: migration 0003). The
 * statement's changes wait on `claimProceeds`; its answer carries `claimColumns`.
 */
export function claimSteps(request: KeyRequest): RawBuilder<unknown> {
  return sql`request as (select ${request.caller}::text as caller, ${request.key}::text as key, ${request.requestHash}::text as request_hash),
  claim as materialized (select claimed.locked, claimed.request_hash, claimed.status, claimed.body
    from request, idempotency_claim(request.caller, request.key) as claimed)`
}

/** True when the statement holds the key and no outcome is stored: only then may it change anything. */
export const claimProceeds = sql<boolean>`(select claim.locked and claim.request_hash is null from claim)`

/** What a statement that claimed a key answers about it (claimedKey reads them), from `claim`. */
export const claimColumns = sql`claim.locked as key_locked, claim.request_hash as key_request_hash, claim.status as key_status,
  claim.body as key_body`

/** The columns claimColumns names, as a row holds them. */
export interface ClaimColumns {
  key_locked: boolean
  key_request_hash: string | null
  key_status: number | null
  key_body: unknown
}

/** What the key held when the statement that answered `row` claimed it. */
export function claimedKey(row: ClaimColumns): KeyClaim {
  return keyClaimOf({ locked: row.key_locked, request_hash: row.key_request_hash, status: row.key_status, body: row.key_body })
}

/**
 * The outcome's row as the last step of a write that is one statement: the `value` (jsonb) of the
 * step named `result`, with `status`, under the claimed key, when that step has a row (it has one
 * only when the statement claimed the key and wrote). It replaces an expired row, as outcomeRecord.
 */
export function outcomeStep(result: string, status: number, ttlSeconds: number): RawBuilder<unknown> {
  return sql`stored_outcome as (${insertOutcome(sql`select request.caller, request.key, request.request_hash, ${sql.lit(status)},
    written.value, now() + make_interval(secs => ${sql.lit(ttlSeconds)}) from request, ${sql.table(result)} as written`)})`
}

/**
 * Stores a refusal that a write's one statement found (it wrote nothing, and its lock ended with
 * it), claiming the key again in the same statement: stored only when the key is free and holds no
 * outcome, so an outcome another request with the same key stored meanwhile is never overwritten.
 * What the key held is returned: free and empty means this refusal is now its outcome.
 */
export async function storeOutcomeIfClaimed(
  db: Executor,
  request: KeyRequest,
  outcome: Pick<StoredOutcome, 'status' | 'body' | 'ttlSeconds'>,
): Promise<KeyClaim> {
  const { rows } = await sql<ClaimColumns>`with ${claimSteps(request)}, stored_outcome as (${insertOutcome(
    sql`select request.caller, request.key, request.request_hash, ${outcome.status}::int, ${JSON.stringify(outcome.body ?? null)}::jsonb,
      now() + make_interval(secs => ${outcome.ttlSeconds}::int) from request where ${claimProceeds}`,
  )})
  select ${claimColumns} from claim`.execute(db)
  const [row] = rows
  if (!row) throw new Error('the claim returned no row')
  return claimedKey(row)
}

/**
 * An outcome's insert from `values` (a `values` list, or a select of its six columns), replacing an
 * expired row under the same key: a live one is never there, since its writer holds the key's lock
 * and found none. `location` is left null: a transport builds its answer from the stored result.
 */
function insertOutcome(values: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`insert into idempotency_keys (caller, key, request_hash, status, body, expires_at)
  ${values}
  on conflict (caller, key) do update set request_hash = excluded.request_hash, status = excluded.status,
    location = null, body = excluded.body, expires_at = excluded.expires_at`
}

/**
 * An outcome's row, replacing an expired one under the same key, as a statement fragment: stored
 * alone (storeOutcome), or inside a write's own statement as a CTE, which saves the write a round
 * trip (src/db/write.ts).
 */
export function outcomeRecord(outcome: StoredOutcome): RawBuilder<unknown> {
  return insertOutcome(sql`values (${outcome.caller}, ${outcome.key}, ${outcome.requestHash}, ${outcome.status},
    ${JSON.stringify(outcome.body ?? null)}, now() + make_interval(secs => ${outcome.ttlSeconds}))`)
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
