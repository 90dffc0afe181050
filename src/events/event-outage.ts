/**
 * A subscription event's fields are resolved when the event arrives, with no client waiting on an
 * answer the way a request's client does. So when the database is unavailable (a restart, a lost
 * connection, a statement past its timeout) a load made for an event is retried with backoff, 50 ms
 * doubling to 1 s, for up to `waitMs` and while the subscriber's connection is open, instead of
 * failing the event at once: across a restart the event arrives with its data, in its place.
 *
 * Past that, the load fails with DATABASE_UNAVAILABLE naming the event, `eventId` and the ids it
 * carries (`orderId`, `commentId`, …), so that the subscriber knows which record to read again. Any
 * other error fails at once.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { isDatabaseUnavailable } from '../db/database-unavailable.ts'
import { ApiError } from '../errors.ts'

const FIRST_RETRY_MS = 50
const MAX_RETRY_MS = 1000

/** Runs `load`, again after each outage error while `waitMs` lasts and `wanted()` holds. */
export async function retryingOutage<T>(load: () => Promise<T>, waitMs: number, wanted: () => boolean): Promise<T> {
  const deadline = Date.now() + waitMs
  for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    try {
      return await load()
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() + delay > deadline || !wanted()) throw error
      // A shutdown closes the connection first, so it waits on one step of this at most.
      await sleep(delay)
    }
  }
}

/**
 * The error an event's field gets when the database stayed unavailable: the outage, named by the
 * event's id and its record ids (every `…Id` field of the event). Other errors are left as they are.
 */
export function eventLoadError(error: unknown, event: unknown): unknown {
  if (!isDatabaseUnavailable(error)) return error
  return new ApiError(
    'DATABASE_UNAVAILABLE',
    'The database is unavailable, so this event could not be resolved: read its record again shortly.',
    {
      extensions: eventIds(event),
      cause: error,
    },
  )
}

function eventIds(event: unknown): Record<string, string> {
  const ids: Record<string, string> = {}
  if (typeof event !== 'object' || event === null) return ids
  for (const [name, value] of Object.entries(event)) {
    if (name.endsWith('Id') && (typeof value === 'number' || typeof value === 'string')) ids[name] = String(value)
  }
  return ids
}
