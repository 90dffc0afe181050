/** Nullable single-record fields: a record the caller cannot find is null, not an error. */
import { ApiError } from '../../errors.ts'

/** null instead of NOT_FOUND, for nullable single-record fields such as Query.order. */
export async function orNull<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null
    throw error
  }
}
