/**
 * Idempotent execution (decisions §7, after Stripe and the IETF Idempotency-Key draft), the part of
 * the write pipeline (src/db/transaction.ts's runWrite is its only caller) that runs a write once
 * per key, for REST POSTs and GraphQL mutations that take an `idempotencyKey` alike:
 *   - same key, same request: the stored outcome, marked replayed, and nothing runs again;
 *   - same key, other request: 422; same key while the first is still running: 409 + Retry-After;
 *   - the outcome is written in the same transaction as the change, so neither exists without
 *     the other; a 4xx outcome is stored too (its partial writes rolled back to a savepoint, or,
 *     for work whose refusals all come before its first change, with nothing to roll back);
 *     a 5xx is not stored, so a retry can still succeed.
 * What is stored is what a replay returns, in no transport's terms: the write's result and its
 * kind (a creation or a change, as the service says), or its refusal. A transport builds its
 * answer from that at its edge, the same way for the first answer and for a replay (REST: 201 and
 * Location from the record; GraphQL: the payload).
 * Round trips of a keyed write: BEGIN, the claim (lock and stored outcome in one), the work (in a
 * savepoint only when it may refuse after writing), the outcome, COMMIT. A work that can put the
 * outcome of its success in its own last statement (`OutcomeRecorder`) saves the outcome's.
 */
import { createHash } from 'node:crypto'
import type { ControlledTransaction, Kysely, RawBuilder, Transaction } from 'kysely'
import { ApiError, badRequest, codeForStatus, conflict, type FieldError, isErrorCode, unprocessable } from '../errors.ts'
import { claimKey, outcomeRecord, type StoredOutcome, storeOutcome } from './repositories/idempotency-keys.ts'
import type { Database } from './schema.ts'

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60
const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/

/** A request's claim to run once per key: who sent it, the key, and what it asked for. */
export interface IdempotencyClaim {
  caller: string
  key: string
  /** What identifies "the same request": method, path and body for REST; field and arguments for GraphQL. */
  fingerprint: unknown
}

/** A write's result, and whether it is the stored result of an earlier request with the same key. */
export interface Written<T> {
  value: T
  replayed: boolean
}

/**
 * The rule of what a key is, for every transport. Each transport reads the key from where it
 * carries it (a header, an argument) and names that place in the error, `field`.
 */
export function checkIdempotencyKey(key: string, field: Omit<FieldError, 'message'>): void {
  if (!KEY_PATTERN.test(key)) {
    throw badRequest('INVALID_IDEMPOTENCY_KEY', 'An Idempotency-Key is 1-255 printable ASCII characters.', [
      { ...field, message: 'must be 1-255 printable ASCII characters' },
    ])
  }
}

/** Canonical JSON: object keys sorted, so that the same body always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

function requestHash(fingerprint: unknown): string {
  return createHash('sha256').update(canonical(fingerprint)).digest('hex')
}

/** What a write does when it succeeds: make a record, or change existing ones. */
export type WriteKind = 'creation' | 'change'

/**
 * The stored outcome of the work's success with `value`, as a fragment (a CTE body) for the work's
 * own last statement, so that storing it costs no round trip of its own. A work that uses it must
 * run the fragment and return that same `value`.
 */
export type OutcomeRecorder = (value: unknown) => RawBuilder<unknown>

/** The work an idempotent write runs once, what it does, and whether a refusal of it can leave changes to undo. */
export interface IdempotentWork<T> {
  run: (trx: Transaction<Database>, recordOutcome: OutcomeRecorder) => Promise<T>
  kind: WriteKind
  /**
   * True when every 4xx `run` throws comes before its first change (src/db/transaction.ts's
   * checked work guarantees it): a refusal has nothing to roll back, so no savepoint is taken.
   */
  refusesBeforeWriting: boolean
}

/**
 * Runs `work` once per key, in a transaction this function owns. Errors `work` throws are
 * ApiErrors (stored, then thrown) or propagate (5xx, not stored, so a retry can still succeed).
 */
export async function runIdempotent<T>(db: Kysely<Database>, claim: IdempotencyClaim, work: IdempotentWork<T>): Promise<Written<T>> {
  const hash = requestHash(claim.fingerprint)
  const trx = await db.startTransaction().execute()
  try {
    const claimed = await claimKey(trx, claim.caller, claim.key)
    const stored = claimed.stored
    // A finished key answers with its outcome whoever holds the lock (another replay, reading);
    // 409 is only for a first request still running (decisions §7, "Replays under concurrency").
    if (!stored && !claimed.locked) {
      throw conflict('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
        'retry-after': '1',
      })
    }
    if (stored) {
      if (stored.requestHash !== hash) {
        throw unprocessable('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different request.')
      }
      await trx.commit().execute()
      return replay<T>(stored)
    }

    const outcome = { caller: claim.caller, key: claim.key, requestHash: hash, ttlSeconds: IDEMPOTENCY_TTL_SECONDS }
    let recorded: { value: unknown } | undefined
    const recordOutcome: OutcomeRecorder = (value) => {
      recorded = { value }
      return outcomeRecord({ ...outcome, status: SUCCEEDED[work.kind], body: value })
    }
    const run = (executor: Transaction<Database>) => work.run(executor, recordOutcome)
    const attempt = work.refusesBeforeWriting ? await attemptOf(run(trx)) : await attemptInSavepoint(trx, run)
    if (attempt.succeeded && recorded !== undefined) {
      // Stored by the work's own statement; a result other than the one stored would replay wrong.
      if (recorded.value !== attempt.value) throw new Error('A write stored an outcome other than its result.')
    } else {
      // A refusal (a savepoint's rollback took back any outcome the work had recorded), or a work
      // that records none.
      await storeOutcome(trx, { ...outcome, ...outcomeOf(attempt, work.kind) })
    }
    await trx.commit().execute()
    if (!attempt.succeeded) throw attempt.error
    return { value: attempt.value, replayed: false }
  } catch (error) {
    if (!trx.isCommitted && !trx.isRolledBack)
      await trx
        .rollback()
        .execute()
        .catch(() => {})
    throw error
  }
}

type Attempt<T> = { succeeded: true; value: T } | { succeeded: false; error: ApiError }

/** The work's value, or its refusal (a 4xx, to be stored); anything else propagates. */
async function attemptOf<T>(running: Promise<T>): Promise<Attempt<T>> {
  try {
    return { succeeded: true, value: await running }
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) throw error
    return { succeeded: false, error }
  }
}

/** The work in a savepoint: a refused attempt's partial writes go, and its outcome is stored for the retries. */
async function attemptInSavepoint<T>(
  trx: ControlledTransaction<Database>,
  run: (trx: Transaction<Database>) => Promise<T>,
): Promise<Attempt<T>> {
  const savepoint = await trx.savepoint('idempotent_work').execute()
  const attempt = await attemptOf(run(savepoint))
  if (attempt.succeeded) await savepoint.releaseSavepoint('idempotent_work').execute()
  else await savepoint.rollbackToSavepoint('idempotent_work').execute()
  return attempt
}

/**
 * `status` says which kind of outcome a row holds, in the numbers rows have always held: 201 a
 * record created, 200 records changed, the refusal's status (the error catalogue's, 4xx) for a
 * refusal. Rows stored before this pipeline held REST's answer there (the same numbers for REST;
 * 200 for every GraphQL success) and a Location no replay reads: they replay alike.
 */
const SUCCEEDED: Record<WriteKind, number> = { creation: 201, change: 200 }

interface SerializedError {
  status: number
  code: string
  detail: string
  errors?: ApiError['errors']
  headers: Record<string, string>
}

function outcomeOf<T>(attempt: Attempt<T>, kind: WriteKind): Pick<StoredOutcome, 'status' | 'body'> {
  if (attempt.succeeded) return { status: SUCCEEDED[kind], body: attempt.value }
  const { error } = attempt
  const serialized: SerializedError = {
    status: error.status,
    code: error.code,
    detail: error.detail,
    ...(error.errors ? { errors: error.errors } : {}),
    headers: error.headers,
  }
  return { status: error.status, body: { __error: serialized } }
}

/** A stored result replays as that result, a stored refusal as the same error; both marked replayed. */
function replay<T>(stored: Pick<StoredOutcome, 'status' | 'body'>): Written<T> {
  const body: unknown = typeof stored.body === 'string' ? JSON.parse(stored.body) : stored.body
  if (stored.status < 400) {
    // The stored body is the JSON of a T runIdempotent returned for the same request.
    return { value: body as T, replayed: true }
  }
  const e = (body as { __error: SerializedError }).__error
  // A code the catalogue no longer lists replays as its status' generic code.
  throw new ApiError(isErrorCode(e.code) ? e.code : codeForStatus(e.status), e.detail, {
    ...(e.errors ? { errors: e.errors } : {}),
    headers: { ...e.headers, 'idempotent-replayed': 'true' },
  })
}
