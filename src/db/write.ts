/**
 * The write path (decisions §7), top to bottom in one file, in two forms. `runWrite` opens a
 * write's transaction; with an idempotency key (after Stripe and the IETF Idempotency-Key draft) it
 * claims the key (its lock and its stored outcome in one round trip) and replays a stored outcome
 * or refuses (409 while the first request runs, 422 for another request); it runs the work's
 * `check`, then its `write`; it stores a keyed write's outcome (in the write's own last statement
 * when the work uses `outcomeOf`, else by a statement of its own); it commits; then it runs the
 * effects that follow the commit. `compileStatementWrite` is the same path as one statement in
 * autocommit, for a work that SQL can say at once (`StatementWork`): the claim, the checks, the
 * changes and the outcome in that order, in one round trip.
 *
 * Who calls it: the service that makes the write, always, with the work in one of the two forms
 * (`Work`: `check` reads and refuses, `write` changes and refuses nothing; `StatementWork`: steps
 * whose changes hang on the checked row). A caller (a REST handler, a resolver) hands the service
 * what the write needs beyond the command (its idempotency claim, its precondition) and gets the
 * result back, never a transaction. Nothing here calls back up: what a transport answers, it
 * builds at its edge from the result, fresh or replayed alike.
 *
 * Round trips of a keyed write. In a transaction: BEGIN, the claim, the work's statements, the
 * outcome (none when the work's last statement carries it), COMMIT; no savepoint (but for a work
 * that says its write may refuse): a refusal comes before the work's first change, so it has
 * nothing to roll back and is stored in the same transaction. As one statement: one, for a write,
 * a replay, a 409 and a 422 for another request's key alike; two for a refusal, whose outcome a
 * second statement stores (storeRefusal says why that stays race-free).
 */
import { createHash } from 'node:crypto'
import { type ControlledTransaction, type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import { ApiError, badRequest, codeForStatus, conflict, type FieldError, isErrorCode, unprocessable } from '../errors.ts'
import { IdempotencyKeySchema } from '../generated/openapi/idempotency-key.ts'
import { compiledByShape, type StatementTarget } from './compiled-statement.ts'
import {
  type ClaimColumns,
  claimColumns,
  claimedKey,
  claimKey,
  claimProceeds,
  claimSteps,
  type KeyClaim,
  type KeyRequest,
  outcomeRecord,
  outcomeStep,
  type StoredOutcome,
  storeOutcome,
  storeOutcomeIfClaimed,
} from './repositories/idempotency-keys.ts'
import type { Database } from './schema.ts'

/** What a write does when it succeeds: make a record, or change existing ones. */
export type WriteKind = 'creation' | 'change'

/**
 * The status of a success, by its kind: the number a stored outcome's row holds (rows have always
 * held these) and the status REST answers with (src/http/write-answers.ts): 201 a record created,
 * 200 records changed. A refusal's row holds the refusal's own status (the error catalogue's 4xx).
 */
export const SUCCESS_STATUS = { creation: 201, change: 200 } as const satisfies Record<WriteKind, number>

/**
 * A write's result, whether it is the stored result of an earlier request with the same key, and,
 * for a creation only, `created` (a change's result is just its value and `replayed`).
 */
export interface Written<T> {
  value: T
  replayed: boolean
  created?: true
}

/** A request's claim to run once per key: who sent it, the key, and what it asked for. */
export interface IdempotencyClaim {
  caller: string
  key: string
  /** What identifies "the same request": method, path and body for REST; field and arguments for GraphQL. */
  fingerprint: unknown
}

/** What a write takes besides its command: with an idempotency claim, it runs at most once per key. */
export interface WriteOptions {
  idempotency?: IdempotencyClaim | undefined
}

/** Something a write must do once its transaction has committed (a cache invalidation, say). */
export type AfterCommit = () => Promise<void>

/** What a work's `write` can use. */
export interface WriteScope {
  trx: Transaction<Database>
  /**
   * Runs `effect` after the commit, and never when the write is rolled back, refused or replayed:
   * a cache invalidated before the commit could be re-filled from the old data by a concurrent read.
   */
  afterCommit(effect: AfterCommit): void
  /**
   * A keyed write's stored outcome for `value`, as a fragment (a CTE body) for the write's last
   * statement, so that it costs no round trip of its own; undefined for a write without a key.
   * A write that runs it returns that same `value`.
   */
  outcomeOf(value: unknown): RawBuilder<unknown> | undefined
}

/**
 * A write, in the one form every write takes: its refusals all come before its first change.
 * `check` reads what the rules need and refuses (throws an ApiError) or hands `write` what it
 * found; a refusal only a statement can find (an insert's `on conflict do nothing` that found the
 * key taken) belongs there too, as long as the refused statement changed nothing. `write` makes
 * the changes and refuses nothing; a refusal from it is a bug in the work and fails as one (500,
 * rolled back, not stored), never stored with its changes.
 *
 * `writeMayRefuse` is for a work whose refusal only its changes can discover: its `write` may then
 * refuse (rolled back with the transaction; for a keyed write, to a savepoint around `write`, so
 * that the refusal is stored without the changes, two round trips more).
 */
export interface Work<Checked, T> {
  check(trx: Transaction<Database>): Promise<Checked>
  write(scope: WriteScope, checked: Checked): Promise<T>
  writeMayRefuse?: true
}

/** How long a key keeps its outcome. */
const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60

/**
 * Runs `work` in a transaction of its own; with an idempotency claim, at most once per key (the
 * stored outcome otherwise). The effects it registers run after the commit, in order; one that
 * fails is logged by its owner, never turns a committed write into an error. `kind` says what a
 * success is, in no transport's terms. Errors the work throws are refusals (ApiErrors below 500:
 * a keyed write stores them, then throws them) or failures (anything else: rolled back, not
 * stored, so a retry can still succeed).
 */
export async function runWrite<Checked, T>(
  db: Kysely<Database>,
  idempotency: IdempotencyClaim | undefined,
  work: Work<Checked, T>,
  kind: WriteKind = 'change',
): Promise<Written<T>> {
  const created = kind === 'creation' ? ({ created: true } as const) : {}
  const trx = await db.startTransaction().execute()
  try {
    // The claim: a finished key replays (or is 422 for another request); a running one is 409.
    const key = idempotency ? await claim(trx, idempotency) : undefined
    if (key?.stored) {
      await trx.commit().execute()
      return { ...replay<T>(key.stored), ...created }
    }
    const outcome = key?.outcome

    // The work: its check, then its write.
    const effects: AfterCommit[] = []
    let recorded: { value: unknown } | undefined
    const scope: WriteScope = {
      trx,
      afterCommit: (effect) => void effects.push(effect),
      outcomeOf: (value) => {
        if (!outcome) return undefined
        recorded = { value }
        return outcomeRecord({ ...outcome, status: SUCCESS_STATUS[kind], body: value })
      },
    }
    let attempt: Attempt<T>
    try {
      attempt = { succeeded: true, value: await checkThenWrite(work, scope, outcome ? trx : undefined) }
    } catch (error) {
      // Without a key a refusal is thrown as it is, and the transaction rolled back.
      if (!outcome || !isRefusal(error)) throw error
      attempt = { succeeded: false, error }
    }

    // The outcome: stored by the write's own last statement, or by a statement of its own.
    if (outcome) {
      if (attempt.succeeded && recorded !== undefined) {
        // A result other than the one stored would replay wrong.
        if (recorded.value !== attempt.value) throw new Error('A write stored an outcome other than its result.')
      } else {
        // A refusal (a savepoint's rollback took back any outcome the write had recorded), or a
        // write that records none.
        await storeOutcome(trx, { ...outcome, ...storedOutcomeOf(attempt, kind) })
      }
    }

    await trx.commit().execute()
    if (!attempt.succeeded) throw attempt.error
    // After the commit: a refused attempt (thrown just above) registers no effect that runs.
    for (const effect of effects) await effect()
    return { value: attempt.value, replayed: false, ...created }
  } catch (error) {
    if (!trx.isCommitted && !trx.isRolledBack)
      await trx
        .rollback()
        .execute()
        .catch(() => {})
    throw error
  }
}

/**
 * A write that is one statement (decisions §7, "A write in one statement"): the second form of a
 * write, for a work whose reads, checks and changes SQL can say at once. Its statement runs in
 * autocommit, one round trip and no BEGIN or COMMIT: first, with a key, the key's claim (its lock
 * taken inside the statement and held to its end, and the live stored outcome); then the work's
 * steps, whose changes all hang on one row (`result`) that exists only when the key is this
 * request's to run and every check passed; then, with a key, the outcome stored from that same
 * row. So a replay, a 409, a 422 for another request's key and a refusal each change nothing.
 *
 * `steps` are the statement's CTEs (`name as (…)`, comma-separated), in the work's repository:
 * reads, the checked row gated on `proceeds`, the step named `result` (at most one row, its
 * `value` the written result as jsonb, exactly what the answer, a replay and an event carry), and
 * the changes made from it. `columns`, if any, are the answer's other columns: what explains a
 * refusal (the facts the checks read) and what a change must cause (a NOTIFY). `parametersOf`
 * lists the values `steps` then `columns` bind, in order. `refusalOf` names the refusal from a row
 * without a result: the rule, in the service, for what a check that failed means to the caller
 * (undefined: no check failed, a bug, 500). `afterCommit` runs after a statement that wrote, as
 * runWrite's effects do.
 */
export interface StatementWork<Input, Row extends object, T> extends StatementSteps<Input> {
  refusalOf(row: Row, input: Input): ApiError | undefined
  afterCommit?(input: Input, value: T): Promise<void>
}

/** A StatementWork's SQL, which its repository writes: all of it but the service's rules. */
export interface StatementSteps<Input> {
  steps(input: Input, proceeds: RawBuilder<boolean>): RawBuilder<unknown>
  result: string
  columns?: RawBuilder<unknown>
  parametersOf(input: Input): unknown[]
}

/** A write that is one statement, compiled: run with the request's claim and the work's input. */
export type StatementWrite<Input, T> = (idempotency: IdempotencyClaim | undefined, input: Input) => Promise<Written<T>>

/**
 * Compiles `work` once per shape (with a key or without), for the service that builds it once:
 * no query is built or compiled per request. The result is a write as runWrite's, fresh or
 * replayed, or a refusal thrown (stored first, with a key). A refusal's outcome is the one case
 * that takes a second statement: see storeRefusal.
 */
export function compileStatementWrite<Input, Row extends object, T>(
  target: StatementTarget,
  work: StatementWork<Input, Row, T>,
  kind: WriteKind = 'change',
): StatementWrite<Input, T> {
  const created = kind === 'creation' ? ({ created: true } as const) : {}
  // What the statement answers besides the claim: the result's value and the work's own columns.
  const value = sql`(select ${sql.ref(`${work.result}.value`)} from ${sql.table(work.result)}) as value`
  const answer = work.columns ? sql`${value}, ${work.columns}` : value
  const statement = compiledByShape<{ input: Input; key: KeyRequest | undefined }, Row & ClaimColumns & { value: T | null }>(target, {
    shapeOf: ({ key }) => (key ? 'keyed' : 'unkeyed'),
    build: ({ input, key }) =>
      key
        ? sql`with ${claimSteps(key)}, ${work.steps(input, claimProceeds)},
          ${outcomeStep(work.result, SUCCESS_STATUS[kind], IDEMPOTENCY_TTL_SECONDS)}
          select ${claimColumns}, ${answer} from claim`
        : sql`with ${work.steps(input, sql<boolean>`true`)} select ${answer}`,
    parametersOf: ({ input, key }) => [...(key ? [key.caller, key.key, key.requestHash] : []), ...work.parametersOf(input)],
  })
  return async (idempotency, input) => {
    const key = idempotency && { caller: idempotency.caller, key: idempotency.key, requestHash: hashOf(idempotency.fingerprint) }
    // On the database itself, autocommit: the short path where the database has one.
    const [row] = await statement(target.db, { input, key })
    if (!row) throw new Error('A write statement answered no row.')
    // The claim: a finished key replays (or is 422 for another request); a running one is 409.
    const stored = key ? storedOutcomeToReplay(claimedKey(row), key.requestHash) : undefined
    if (stored) return { ...replay<T>(stored), ...created }
    // The work: written (the outcome with it), or refused with nothing written.
    if (row.value !== null) {
      await work.afterCommit?.(input, row.value)
      return { value: row.value, replayed: false, ...created }
    }
    const refusal = work.refusalOf(row, input)
    if (!refusal || !isRefusal(refusal))
      throw new Error('A write statement wrote nothing, and its checks name no refusal.', { cause: refusal })
    const instead = key ? await storeRefusal<T>(target.db, key, refusal, kind) : undefined
    if (instead) return { ...instead, ...created }
    throw refusal
  }
}

/**
 * A refusal as its key's outcome, by a second statement (the refusal is rare; its facts are
 * only known once the first statement answered, and that statement's lock ended with it). Race-free
 * all the same: the second statement claims the key again and stores the refusal only when it gets
 * the lock and finds no outcome; whatever another request with the same key did in between is
 * what this one answers instead: its stored outcome (returned, or thrown when a refusal; 422 for
 * another request), or 409 while it runs. Undefined once the refusal is stored.
 */
async function storeRefusal<T>(db: Kysely<Database>, key: KeyRequest, refusal: ApiError, kind: WriteKind): Promise<Written<T> | undefined> {
  const outcome = { ...storedOutcomeOf({ succeeded: false, error: refusal }, kind), ttlSeconds: IDEMPOTENCY_TTL_SECONDS }
  const stored = storedOutcomeToReplay(await storeOutcomeIfClaimed(db, key, outcome), key.requestHash)
  return stored && replay<T>(stored)
}

/**
 * The rule of what a key is, for every transport: the contract's `IdempotencyKey` parameter
 * (generated from openapi.yaml). Each transport reads the key from where it carries it (a header,
 * an argument) and names that place in the error, `field`.
 */
export function checkIdempotencyKey(key: string, field: Omit<FieldError, 'message'>): void {
  if (!isIdempotencyKey(key)) {
    const lengths = `${IdempotencyKeySchema.minLength}-${IdempotencyKeySchema.maxLength}`
    throw badRequest('INVALID_IDEMPOTENCY_KEY', `An Idempotency-Key is ${lengths} printable ASCII characters.`, [
      { ...field, message: `must be ${lengths} printable ASCII characters` },
    ])
  }
}

/** JSON Schema's `pattern` is an ECMA-262 regular expression with the `u` flag (2020-12, §6.3.3). */
const KEY_PATTERN = new RegExp(IdempotencyKeySchema.pattern, 'u')

/** JSON Schema counts a string's length in code points. */
function isIdempotencyKey(key: string): boolean {
  const length = [...key].length
  return length >= IdempotencyKeySchema.minLength && length <= IdempotencyKeySchema.maxLength && KEY_PATTERN.test(key)
}

/** A claimed key: its stored outcome (to replay), or what this request's outcome will be stored as. */
type ClaimedKey =
  | { stored: Pick<StoredOutcome, 'status' | 'body'>; outcome?: undefined }
  | { stored?: undefined; outcome: Omit<StoredOutcome, 'status' | 'body'> }

/** Claims the key in one round trip (its lock and its live stored outcome), in the write's transaction. */
async function claim(trx: Transaction<Database>, idempotency: IdempotencyClaim): Promise<ClaimedKey> {
  const requestHash = hashOf(idempotency.fingerprint)
  const stored = storedOutcomeToReplay(await claimKey(trx, idempotency.caller, idempotency.key), requestHash)
  if (stored) return { stored }
  return { outcome: { caller: idempotency.caller, key: idempotency.key, requestHash, ttlSeconds: IDEMPOTENCY_TTL_SECONDS } }
}

/**
 * What a claimed key means for the request with `requestHash`, in either form of write: its stored
 * outcome to replay; undefined when the key is the request's to run (its lock granted, no outcome
 * stored); else a refusal. A finished key answers with its outcome whoever holds the lock (another
 * replay, reading); 409 is only for a first request still running (decisions §7, "Replays under
 * concurrency"); 422 for a stored outcome of another request.
 */
function storedOutcomeToReplay(key: KeyClaim, requestHash: string): Pick<StoredOutcome, 'status' | 'body'> | undefined {
  const { locked, stored } = key
  if (!stored && !locked) {
    throw conflict('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
      'retry-after': '1',
    })
  }
  if (stored && stored.requestHash !== requestHash) {
    throw unprocessable('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different request.')
  }
  return stored
}

/** "The same request": the fingerprint as canonical JSON (object keys sorted), hashed. */
function hashOf(fingerprint: unknown): string {
  return createHash('sha256').update(canonical(fingerprint)).digest('hex')
}

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

/**
 * Checks, then writes; a refusal from `write` is a bug unless the work says its write may refuse.
 * `keyed` is the keyed write's transaction, where a write that may refuse takes its savepoint.
 */
async function checkThenWrite<Checked, T>(
  work: Work<Checked, T>,
  scope: WriteScope,
  keyed: ControlledTransaction<Database> | undefined,
): Promise<T> {
  const checked = await work.check(scope.trx)
  if (work.writeMayRefuse) return keyed ? writeInSavepoint(keyed, work, scope, checked) : work.write(scope, checked)
  try {
    return await work.write(scope, checked)
  } catch (error) {
    if (isRefusal(error)) {
      throw new Error(`A write refused after its checks (${error.code}); refusals belong in its check.`, { cause: error })
    }
    throw error
  }
}

/** A keyed write that may refuse after changing: its refusal rolls back to the savepoint, so it is stored without the changes. */
async function writeInSavepoint<Checked, T>(
  trx: ControlledTransaction<Database>,
  work: Work<Checked, T>,
  scope: WriteScope,
  checked: Checked,
): Promise<T> {
  const savepoint = await trx.savepoint('write').execute()
  try {
    const value = await work.write({ ...scope, trx: savepoint }, checked)
    await savepoint.releaseSavepoint('write').execute()
    return value
  } catch (error) {
    if (isRefusal(error)) await savepoint.rollbackToSavepoint('write').execute()
    throw error
  }
}

type Attempt<T> = { succeeded: true; value: T } | { succeeded: false; error: ApiError }

/** A refusal (a 4xx from the error catalogue), stored for a keyed write; anything else is a failure. */
function isRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status < 500
}

interface SerializedError {
  status: number
  code: string
  detail: string
  errors?: ApiError['errors']
  headers: Record<string, string>
}

/**
 * What a key stores, in no transport's terms: the result and its kind's status, or the refusal
 * and its status. Rows stored before this pipeline held REST's answer in `status` (the same
 * numbers for REST; 200 for every GraphQL success) and a Location no replay reads: they replay alike.
 */
function storedOutcomeOf<T>(attempt: Attempt<T>, kind: WriteKind): Pick<StoredOutcome, 'status' | 'body'> {
  if (attempt.succeeded) return { status: SUCCESS_STATUS[kind], body: attempt.value }
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
    // The stored body is the JSON of a T runWrite returned for the same request.
    return { value: body as T, replayed: true }
  }
  const e = (body as { __error: SerializedError }).__error
  // A code the catalogue no longer lists replays as its status' generic code.
  throw new ApiError(isErrorCode(e.code) ? e.code : codeForStatus(e.status), e.detail, {
    ...(e.errors ? { errors: e.errors } : {}),
    headers: { ...e.headers, 'idempotent-replayed': 'true' },
  })
}
