/**
 * Idempotent execution (decisions §7, after Stripe and the IETF Idempotency-Key draft), shared by
 * REST POSTs and GraphQL mutations that take an `idempotencyKey`:
 *   - same key, same request: the stored outcome, marked replayed, and nothing runs again;
 *   - same key, other request: 422; same key while the first is still running: 409 + Retry-After;
 *   - the outcome is written in the same transaction as the change, so neither exists without
 *     the other; a 4xx outcome is stored too (its partial writes rolled back to a savepoint, or,
 *     for work whose refusals all come before its first change, with nothing to roll back);
 *     a 5xx is not stored, so a retry can still succeed.
 * Round trips of a keyed write: BEGIN, the claim (lock and stored outcome in one), the work (in a
 * savepoint only when it may refuse after writing), the outcome, COMMIT.
 */
import { createHash } from 'node:crypto'
import type { ControlledTransaction, Kysely, Transaction } from 'kysely'
import type { Database } from './db/schema.ts'
import type { Written } from './db/transaction.ts'
import { claimKey, storeOutcome } from './db/repositories/idempotency-keys.ts'
import { ApiError, badRequest, codeForStatus, conflict, isErrorCode, unprocessable } from './errors.ts'

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60
const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/

/** A request's claim to run once per key: who sent it, the key, and what it asked for. */
export interface IdempotencyClaim<T> {
  caller: string
  key: string
  /** What identifies "the same request": method, path and body for REST; field and arguments for GraphQL. */
  fingerprint: unknown
  /** How the transport answers a success, stored with the result (REST: 201 and a Location). */
  answer: (value: T) => StoredAnswer
}

export interface StoredAnswer {
  status: number
  location?: string | undefined
}

/**
 * The key an Idempotency-Key header names. The IETF draft defines the field as an RFC 8941
 * structured-field string (`"abc"`); clients also send the bare token (`abc`). Both name the
 * same key: a well-formed sf-string is unquoted (and its `\"` and `\\` unescaped).
 */
export function idempotencyKeyOfHeader(value: string): string {
  const quoted = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/.exec(value)
  return quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : value
}

export function validateIdempotencyKey(key: string, location: 'header' | 'argument'): void {
  if (!KEY_PATTERN.test(key)) {
    throw badRequest('INVALID_IDEMPOTENCY_KEY', 'An Idempotency-Key is 1-255 printable ASCII characters.', [
      {
        in: location === 'header' ? 'header' : 'body',
        name: location === 'header' ? 'Idempotency-Key' : 'idempotencyKey',
        message: 'must be 1-255 printable ASCII characters',
      },
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

export function requestHash(fingerprint: unknown): string {
  return createHash('sha256').update(canonical(fingerprint)).digest('hex')
}

/** The work an idempotent write runs once, and whether a refusal of it can leave changes to undo. */
export interface IdempotentWork<T> {
  run: (trx: Transaction<Database>) => Promise<T>
  /**
   * True when every 4xx `run` throws comes before its first change (src/db/transaction.ts's
   * checked work guarantees it): a refusal has nothing to roll back, so no savepoint is taken.
   */
  refusesBeforeWriting: boolean
}

/**
 * Runs `work` once per key, in a transaction this function owns (src/db/transaction.ts's runWrite
 * is its only caller). Errors `work` throws are ApiErrors (stored, then thrown) or propagate (5xx,
 * not stored, so a retry can still succeed).
 */
export async function runIdempotent<T>(db: Kysely<Database>, claim: IdempotencyClaim<T>, work: IdempotentWork<T>): Promise<Written<T>> {
  const hash = requestHash(claim.fingerprint)
  const trx = await db.startTransaction().execute()
  try {
    const claimed = await claimKey(trx, claim.caller, claim.key)
    if (!claimed.locked) {
      throw conflict('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
        'retry-after': '1',
      })
    }
    const stored = claimed.stored
    if (stored) {
      if (stored.request_hash !== hash) {
        throw unprocessable('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different request.')
      }
      await trx.commit().execute()
      const body: unknown = typeof stored.body === 'string' ? JSON.parse(stored.body) : stored.body
      throwStoredError(body)
      // The stored body is the JSON of a T this function returned for the same request.
      return { value: body as T, replayed: true }
    }

    const attempt = work.refusesBeforeWriting ? await attemptOf(work.run(trx)) : await attemptInSavepoint(trx, work.run)
    const answer: StoredAnswer = attempt.succeeded ? claim.answer(attempt.value) : { status: attempt.error.status }
    await storeOutcome(trx, {
      caller: claim.caller,
      key: claim.key,
      requestHash: hash,
      status: answer.status,
      location: answer.location ?? null,
      body: attempt.succeeded ? attempt.value : { __error: serializeError(attempt.error) },
      ttlSeconds: IDEMPOTENCY_TTL_SECONDS,
    })
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

interface SerializedError {
  status: number
  code: string
  detail: string
  errors?: ApiError['errors']
  headers: Record<string, string>
}

function serializeError(error: ApiError): SerializedError {
  return {
    status: error.status,
    code: error.code,
    detail: error.detail,
    ...(error.errors ? { errors: error.errors } : {}),
    headers: error.headers,
  }
}

/** A stored 4xx outcome replays as the same error, marked replayed. */
function throwStoredError(body: unknown): void {
  if (!body || typeof body !== 'object' || !('__error' in body)) return
  const e = (body as { __error: SerializedError }).__error
  // A code the catalogue no longer lists replays as its status' generic code.
  throw new ApiError(isErrorCode(e.code) ? e.code : codeForStatus(e.status), e.detail, {
    ...(e.errors ? { errors: e.errors } : {}),
    headers: { ...e.headers, 'idempotent-replayed': 'true' },
  })
}
