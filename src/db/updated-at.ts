/**
 * The `updated_at` a changed row gets: now, but always later than before, so that two changes in
 * one millisecond (or a clock step back) still give a newer ETag and Last-Modified.
 */
import { sql } from 'kysely'

export const nextUpdatedAt = () => sql<string>`greatest(now(), updated_at + interval '1 millisecond')`
