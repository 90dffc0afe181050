import { sql, type Kysely } from 'kysely'

/**
 * An idempotency key's claim in one round trip (decisions §7): the key's transaction-scoped
 * advisory lock, then its live stored outcome. It has to be a PL/pgSQL function: under READ
 * COMMITTED one plain statement reads with the snapshot taken when it started, before its lock
 * was granted, and would miss an outcome the key's previous holder committed in between (and run
 * the work a second time). A volatile function takes a fresh snapshot for each statement in it,
 * so the read sees everything committed before the lock was taken. One row always: `locked`
 * false when another transaction holds the key; the outcome's columns null when none is stored.
 * The lock's key is the one instances before this migration take (`caller:key`, seed 7), so old
 * and new instances exclude each other during a rolling deploy.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function idempotency_claim(claim_caller text, claim_key text)
    returns table (locked boolean, request_hash text, status integer, location text, body jsonb)
    language plpgsql volatile
    as $$
    begin
      locked := pg_try_advisory_xact_lock(hashtextextended(claim_caller || ':' || claim_key, 7));
      if locked then
        select stored.request_hash, stored.status, stored.location, stored.body
        into request_hash, status, location, body
        from idempotency_keys as stored
        where stored.caller = claim_caller and stored.key = claim_key and stored.expires_at > now();
      end if;
      return next;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function idempotency_claim(text, text)`.execute(db)
}
