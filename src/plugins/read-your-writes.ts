/**
 * Read-your-writes across replicas and instances (decisions §15). With DATABASE_REPLICA_URLS set,
 * every request under /api and /graphql runs in a ReadScope (src/db/read-routing.ts decides where
 * each statement goes):
 * - a REST request other than GET and HEAD is pinned to the primary from its start; a GET, and a
 *   GraphQL request until it turns out to be a mutation, may read from a replica;
 * - a request that wrote answers with `Read-After-LSN`: the primary's WAL position after its commit
 *   (`pg_current_wal_insert_lsn()`, one statement on the primary, only when replicas are configured), and
 *   the position is remembered for its caller (Redis when REDIS_URL is set, this instance's memory
 *   otherwise) for as long as a replica may lag, DATABASE_REPLICA_MAX_LAG and two polls;
 * - a read is served by a replica only if it has replayed the larger of the caller's remembered
 *   position and a `Read-After-LSN` the client sent; otherwise by the primary, at once (no wait).
 * A `Read-After-LSN` that is not a WAL position never gets here: it is 400, with or without replicas
 * (REST: VALIDATION_FAILED by the contract's pattern; GraphQL: BAD_REQUEST by readAfterProblem, at its edge).
 */
import type { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { ReadScope } from '../db/read-routing.ts'
import { formatPosition, POLL_MS, parsePosition, type ReplicaSet } from '../db/replicas.ts'

export const READ_AFTER_HEADER = 'read-after-lsn'
const REDIS_PREFIX = 'api:read-after:'
/** Callers remembered in memory at most (the oldest are forgotten first: their reads go to a replica). */
const MEMORY_LIMIT = 100_000

/** A position as 16 hex digits: Redis compares these as strings, in the order of the positions. */
const padded = (position: bigint) => position.toString(16).padStart(16, '0')

/** Keeps the larger of the stored and the given position, and the time to live. */
const KEEP_LARGER = `local current = redis.call('GET', KEYS[1])
if current and current >= ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`

function callerMemory(redis: Redis | undefined, ttlMs: number, failedOpen: (feature: string, error: unknown) => void) {
  if (redis) {
    return {
      async remember(subject: string, position: bigint) {
        await redis.eval(KEEP_LARGER, 1, REDIS_PREFIX + subject, padded(position), String(ttlMs)).catch((error: unknown) => {
          failedOpen('read-your-writes', error)
        })
      },
      async recall(subject: string): Promise<bigint | undefined> {
        const stored = await redis.get(REDIS_PREFIX + subject).catch((error: unknown) => {
          failedOpen('read-your-writes', error)
          return null
        })
        return stored ? BigInt(`0x${stored}`) : undefined
      },
    }
  }
  const remembered = new Map<string, { position: bigint; until: number }>()
  return {
    async remember(subject: string, position: bigint) {
      const current = remembered.get(subject)
      remembered.delete(subject)
      if (remembered.size >= MEMORY_LIMIT) {
        const oldest = remembered.keys().next().value
        if (oldest !== undefined) remembered.delete(oldest)
      }
      const larger = current && current.position > position && current.until > Date.now() ? current.position : position
      remembered.set(subject, { position: larger, until: Date.now() + ttlMs })
    },
    async recall(subject: string): Promise<bigint | undefined> {
      const entry = remembered.get(subject)
      if (!entry) return undefined
      if (entry.until > Date.now()) return entry.position
      remembered.delete(subject)
      return undefined
    },
  }
}

/**
 * What is wrong with a sent `Read-After-LSN`, or undefined (none sent, or a WAL position): GraphQL's
 * check of the rule the contract states for REST reads (openapi.yaml, components/parameters/ReadAfterLsn).
 */
export function readAfterProblem(sent: string | string[] | undefined): string | undefined {
  if (sent === undefined || (typeof sent === 'string' && parsePosition(sent.trim()) !== undefined)) return undefined
  return 'Read-After-LSN must be a WAL position such as 16/B374D848, sent back as a write answered it.'
}

function sentPosition(request: FastifyRequest): bigint | undefined {
  const sent = request.headers[READ_AFTER_HEADER]
  return typeof sent === 'string' ? parsePosition(sent.trim()) : undefined
}

/** The hooks of read-your-writes; `scopes` is what the routing driver reads each statement's scope from. */
export function readYourWrites(app: FastifyInstance, replicas: ReplicaSet, scopes: AsyncLocalStorage<ReadScope>, maxLagMs: number): void {
  const memory = callerMemory(app.redis, maxLagMs + 2 * POLL_MS + 1000, app.redisFailedOpen)
  const scopeOf = new WeakMap<FastifyRequest, ReadScope>()

  // preHandler: after the body is read and the caller known; `run` carries the scope into the
  // handler and everything it awaits.
  app.addHook('preHandler', (request, _reply, done) => {
    const url = request.url
    const graphql = url.startsWith('/graphql')
    if ((!graphql && !url.startsWith('/api/')) || request.headers.upgrade !== undefined) return done()
    let minimum: Promise<bigint | undefined> | undefined
    const scope: ReadScope = {
      pinned: !graphql && request.method !== 'GET' && request.method !== 'HEAD',
      wrote: false,
      minimumPosition: () => {
        minimum ??= (async () => {
          const sent = sentPosition(request)
          const remembered = request.caller ? await memory.recall(request.caller.subject) : undefined
          if (sent === undefined) return remembered
          return remembered === undefined || sent > remembered ? sent : remembered
        })()
        return minimum
      },
    }
    scopeOf.set(request, scope)
    scopes.run(scope, done)
  })

  app.addHook('onSend', async (request, reply, payload) => {
    const scope = scopeOf.get(request)
    if (!scope?.wrote) return payload
    try {
      const position = await replicas.position()
      reply.header(READ_AFTER_HEADER, formatPosition(position))
      if (request.caller) await memory.remember(request.caller.subject, position)
    } catch (error) {
      // The write committed; without its position the caller's next reads may go to a replica
      // that lags behind it, for at most DATABASE_REPLICA_MAX_LAG: logged, not failed.
      request.log.warn({ err: error }, 'the commit position could not be read')
    }
    return payload
  })
}
