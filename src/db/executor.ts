/**
 * What repositories run their statements on. A file of its own, below src/db/write.ts: the
 * write path uses repositories (the idempotency keys' SQL), so they must not import it back.
 */
import type { Kysely, Transaction } from 'kysely'
import type { Database } from './schema.ts'

/** Either the database or a transaction already open on it: repositories accept both. */
export type Executor = Kysely<Database> | Transaction<Database>
