/**
 * Per-caller points buckets for GraphQL (decisions §9, Shopify's model): a bucket holds up to
 * `capacity` points and refills at `restoreRate` points a second; an operation takes its cost.
 * In memory for one instance, in Redis (one atomic script) when instances share a budget.
 * A Redis bucket that cannot be reached answers `undefined`: the operation goes on unmetered
 * (fail open, decisions §12) rather than failing because of the meter.
 */
import type { Redis } from 'ioredis'

export interface BucketState {
  allowed: boolean
  /** Points left after this operation (or before it, when refused). */
  available: number
  /** Seconds until the refused cost would fit. */
  retryAfterSeconds: number
}

export interface CostBucket {
  capacity: number
  restoreRate: number
  /** `undefined` when the bucket's store is unavailable: nothing was taken, nothing is known. */
  take(caller: string, cost: number): Promise<BucketState | undefined>
}

function state(allowed: boolean, available: number, cost: number, restoreRate: number): BucketState {
  return {
    allowed,
    available: Math.floor(available),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((cost - available) / restoreRate)),
  }
}

export function createMemoryCostBucket(capacity: number, restoreRate: number, now: () => number = Date.now): CostBucket {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return {
    capacity,
    restoreRate,
    async take(caller, cost) {
      const time = now()
      const bucket = buckets.get(caller) ?? { tokens: capacity, at: time }
      const tokens = Math.min(capacity, bucket.tokens + ((time - bucket.at) / 1000) * restoreRate)
      const allowed = cost <= tokens
      const left = allowed ? tokens - cost : tokens
      // A full bucket needs no entry: dropping it keeps memory bounded by active callers.
      if (left >= capacity) buckets.delete(caller)
      else buckets.set(caller, { tokens: left, at: time })
      return state(allowed, left, cost, restoreRate)
    },
  }
}

// Atomic refill-and-take on the Redis server's clock, so instances never disagree on time.
const TAKE_SCRIPT = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or capacity
local at = tonumber(stored[2]) or now
tokens = math.min(capacity, tokens + (now - at) / 1000 * rate)
local allowed = 0
if cost <= tokens then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return { allowed, tostring(tokens) }
`

export function createRedisCostBucket(
  redis: Redis,
  capacity: number,
  restoreRate: number,
  onUnavailable: (error: unknown) => void,
  prefix = 'api-graphql-cost:',
): CostBucket {
  return {
    capacity,
    restoreRate,
    async take(caller, cost) {
      let reply: [number, string]
      try {
        reply = (await redis.eval(TAKE_SCRIPT, 1, `${prefix}${caller}`, capacity, restoreRate, cost)) as [number, string]
      } catch (error) {
        onUnavailable(error)
        return undefined
      }
      const [allowed, tokens] = reply
      return state(allowed === 1, Number(tokens), cost, restoreRate)
    },
  }
}
