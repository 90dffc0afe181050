/**
 * The write pipeline's entry (decisions §7): a write's transaction, once per idempotency key
 * (./idempotency.ts: the key's lock, the stored outcome, the savepoint), and the effects that follow
 * its commit. Who opens a write's transaction: the service that makes the write, always. A caller
 * (a REST handler, a resolver) hands over what the write needs beyond the command itself (its
 * idempotency claim, its precondition) and gets the result back, never a transaction to pass
 * along. Nothing here calls back into a transport: what a transport answers, it builds at its edge
 * from the result this returns, fresh or replayed alike.
 */
import type { Kysely, RawBuilder, Transaction } from 'kysely'
import { ApiError } from '../errors.ts'
import { type IdempotencyClaim, type OutcomeRecorder, runIdempotent, type WriteKind, type Written } from './idempotency.ts'
import type { Database } from './schema.ts'

export type { WriteKind, Written }

/** Something a write must do once its transaction has committed (a cache invalidation, say). */
export type AfterCommit = () => Promise<void>

/** What the work inside a write transaction can use. */
export interface WriteScope {
  trx: Transaction<Database>
  /**
   * Runs `effect` after the outermost commit, and never when the write is rolled back: a cache
   * invalidated before the commit could be re-filled from the old data by a concurrent read.
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
 * A write whose refusals all come before its first change: `check` reads what the rules need and
 * refuses (throws an ApiError) or hands `write` what it found; `write` makes the changes and
 * refuses nothing. Written this way, an idempotent write needs no savepoint (two round trips
 * fewer): a refusal has nothing to roll back.
 */
export interface CheckedWork<Checked, T> {
  check(trx: Transaction<Database>): Promise<Checked>
  write(scope: WriteScope, checked: Checked): Promise<T>
}

/** What a write takes besides its command: with an idempotency claim, it runs at most once per key. */
export interface WriteOptions {
  idempotency?: IdempotencyClaim | undefined
}

/**
 * Runs `work` in a transaction of its own; with an idempotency claim, at most once per key (the
 * stored result otherwise, decisions §7). The effects it registers run after the commit, in order;
 * one that fails is logged by its owner, never turns a committed write into an error. `kind` is
 * stored with a keyed write's outcome: a creation or a change, in no transport's terms.
 */
export async function runWrite<T, Checked = never>(
  db: Kysely<Database>,
  idempotency: IdempotencyClaim | undefined,
  work: ((scope: WriteScope) => Promise<T>) | CheckedWork<Checked, T>,
  kind: WriteKind = 'change',
): Promise<Written<T>> {
  const effects: AfterCommit[] = []
  // An attempt's effects count only if the attempt succeeded: an idempotent attempt refused with
  // a 4xx is rolled back to its savepoint (or wrote nothing) while the transaction itself commits
  // its outcome.
  const attempt = async (trx: Transaction<Database>, recordOutcome?: OutcomeRecorder): Promise<T> => {
    const pending: AfterCommit[] = []
    const scope: WriteScope = { trx, afterCommit: (effect) => void pending.push(effect), outcomeOf: (value) => recordOutcome?.(value) }
    const value = typeof work === 'function' ? await work(scope) : await writeChecked(work, scope)
    effects.push(...pending)
    return value
  }
  const written: Written<T> = idempotency
    ? await runIdempotent(db, idempotency, { run: attempt, kind, refusesBeforeWriting: typeof work !== 'function' })
    : { value: await db.transaction().execute((trx) => attempt(trx)), replayed: false }
  for (const effect of effects) await effect()
  return written
}

/**
 * Checks, then writes. A refusal from `write`, after changes only a savepoint could undo, is a bug
 * in that work: it fails as one (500, rolled back, not stored), never stored with its changes.
 */
async function writeChecked<Checked, T>(work: CheckedWork<Checked, T>, scope: WriteScope): Promise<T> {
  const checked = await work.check(scope.trx)
  try {
    return await work.write(scope, checked)
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      throw new Error(`A checked write refused after its checks (${error.code}); refusals belong in its check.`, { cause: error })
    }
    throw error
  }
}
