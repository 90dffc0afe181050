import type { Kysely, Transaction } from 'kysely'
import type { Database } from './schema.ts'

/** Either the database or a transaction already open on it: services accept both. */
export type Executor = Kysely<Database> | Transaction<Database>

/**
 * Runs `work` in a transaction: a new one, or the caller's when `db` already is one (an
 * idempotent request wraps the service's work and the stored outcome in one transaction).
 */
export function inTransaction<T>(db: Executor, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>)
  return db.transaction().execute(work)
}
