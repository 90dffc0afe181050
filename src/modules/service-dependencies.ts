import type { Kysely } from 'kysely'
import type { CommandValidator } from '../contract/command-validation.ts'
import type { StatementTarget } from '../db/compiled-statement.ts'
import type { Database } from '../db/schema.ts'
import type { CursorCodec } from '../pagination/cursor.ts'

/** What every domain service is built from (see src/services.ts). */
export interface ServiceDependencies {
  db: Kysely<Database>
  /** `db` with its short path for a fixed statement (compiled-statement.ts). */
  statements: StatementTarget
  cursors: CursorCodec
  /** Checks each command against the contract's request schema, for both styles. */
  commands: CommandValidator
  /** Tells caches that public data changed (references as in src/cache-references.ts). */
  invalidate: (references: string[]) => Promise<void>
}
