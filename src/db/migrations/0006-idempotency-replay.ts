import { sql, type Kysely } from 'kysely'

/**
 * A replay of a finished key gets its stored outcome even while another request holds the key's
 * lock (decisions §7, "Replays under concurrency"). Migration 0003's claim answered "locked: false"
 * whenever the lock was taken, and the lock is taken by replays too, for the moment they read: 50
 * concurrent replays of a finished key refused each other with 409. Now, when the lock is not
 * granted, the live stored outcome is read all the same (a fresh snapshot: a volatile function
 * takes one per statement), so a finished key answers with it; only a key with no outcome stored
 * yet, a first request still running, is left unlocked with nothing, the 409. Same signature and
 * the same one round trip, so old and new instances agree during a rolling deploy.
 */
/** The claim function; `readWhenRefused` reads the stored outcome when the lock is not granted too. */
function claimFunction(readWhenRefused: boolean) {
  const read = `select stored.request_hash, stored.status, stored.location, stored.body
        into request_hash, status, location, body
        from idempotency_keys as stored
        where stored.caller = claim_caller and stored.key = claim_key and stored.expires_at > now();`
  return sql`
    create or replace function idempotency_claim(claim_caller text, claim_key text)
    returns table (locked boolean, request_hash text, status integer, location text, body jsonb)
    language plpgsql volatile
    as $$
    begin
      locked := pg_try_advisory_xact_lock(hashtextextended(claim_caller || ':' || claim_key, 7));
      ${sql.raw(readWhenRefused ? read : `if locked then ${read} end if;`)}
      return next;
    end
    $$`
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await claimFunction(true).execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await claimFunction(false).execute(db)
}
