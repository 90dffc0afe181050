/**
 * The streaming replicas reads may go to (DATABASE_REPLICA_URLS, decisions §15), and how far
 * behind each is. Every POLL_MS the primary's WAL position is sampled and each replica's replayed
 * position read; a replica's lag is how long ago the primary was at the position it has replayed
 * (0 when it has replayed the latest sample), so an idle primary makes no lag. A replica is:
 * - `up`: it answered and lags at most DATABASE_REPLICA_MAX_LAG: it serves reads;
 * - `lagging`: further behind: it serves nothing until it catches up;
 * - `down`: it failed to answer (or a read failed on it, see read-routing.ts): it serves nothing
 *   until a poll gets an answer again.
 * Its replayed position, as of the last poll, is what read-your-writes compares a caller's last
 * write with: no statement per read.
 */
import { type Driver, type Kysely, sql } from 'kysely'
import { createDatabase, type DatabaseHandle, type DatabaseLogger } from './database.ts'
import type { Database } from './schema.ts'

export const POLL_MS = 200

export type ReplicaState = 'up' | 'lagging' | 'down'

export interface Replica {
  /** Host, port and database of its URL (no credentials): its name in logs, /readyz and /metrics. */
  name: string
  driver: Driver
}

export interface ReplicaStatus {
  name: string
  state: ReplicaState
  /** Seconds behind the primary at the last poll that reached it; null before the first. */
  lagSeconds: number | null
}

/** A WAL position (`16/B374D848`) as a number, to compare; undefined for anything else. */
export function parsePosition(text: string): bigint | undefined {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text)
  if (!match) return undefined
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`)
}

export function formatPosition(position: bigint): string {
  return `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`
}

function nameOf(url: string): string {
  const parsed = new URL(url)
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`
}

interface Member extends Replica {
  handle: DatabaseHandle
  state: ReplicaState
  replayed: bigint | undefined
  lagMs: number | undefined
  checking: boolean
  /** Statements this replica was picked for (the share of reads it serves). */
  reads: number
}

export interface ReplicaSetOptions {
  urls: string[]
  maxLagMs: number
  /** The primary, unobserved (no request's statement log): polls and commit positions. */
  primary: Kysely<Database>
  statementTimeoutMs: number
  pooled: boolean
  logger: DatabaseLogger
}

export async function createReplicaSet(options: ReplicaSetOptions) {
  const { maxLagMs, primary, logger } = options
  const members: Member[] = []
  for (const url of options.urls) {
    // `pooled` as the primary's: no probe, so a replica that is down at start does not stop it.
    const handle = await createDatabase({ url, statementTimeoutMs: options.statementTimeoutMs, pooled: options.pooled, logger })
    const driver = handle.drivers?.driver()
    if (!driver) throw new Error('a replica needs PostgreSQL')
    await driver.init()
    members.push({ name: nameOf(url), handle, driver, state: 'down', replayed: undefined, lagMs: undefined, checking: false, reads: 0 })
  }
  /** Recent primary positions and when they were read, oldest first, spanning a little more than the lag limit. */
  const samples: Array<{ position: bigint; at: number }> = []
  let primaryReads = 0
  let next = 0
  let closed = false

  const position = async (): Promise<bigint> => {
    const result = await sql<{ position: string }>`select pg_current_wal_insert_lsn()::text as position`.execute(primary)
    const parsed = parsePosition(result.rows[0]?.position ?? '')
    if (parsed === undefined) throw new Error('the primary named no WAL position')
    return parsed
  }

  const setState = (member: Member, state: ReplicaState, error?: unknown) => {
    if (member.state === state) return
    if (state === 'up') logger.info?.({ pooled: options.pooled }, `replica ${member.name} serves reads again`)
    else
      logger.warn(
        { err: error ?? new Error(`lags ${Math.round((member.lagMs ?? 0) / 1000)} s`) },
        `replica ${member.name} is left out (${state})`,
      )
    member.state = state
  }

  const check = async (member: Member) => {
    if (member.checking) return
    member.checking = true
    let timer: NodeJS.Timeout | undefined
    try {
      const read = sql<{
        replayed: string | null
      }>`select coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text as replayed`.execute(member.handle.background)
      // A frozen replica answers nothing: past the lag limit it is down, whatever its query does.
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the replica did not answer')), Math.max(maxLagMs, 500))
      })
      const result = await Promise.race([read, timeout])
      const replayed = parsePosition(result.rows[0]?.replayed ?? '')
      if (replayed === undefined) throw new Error('the replica named no replayed position')
      member.replayed = replayed
      const now = performance.now()
      const latest = samples.at(-1)
      let reached: { at: number } | undefined
      for (let i = samples.length - 1; i >= 0; i--) {
        const sample = samples[i]
        if (sample && sample.position <= replayed) {
          reached = i === samples.length - 1 ? { at: now } : sample
          break
        }
      }
      member.lagMs = latest === undefined ? 0 : now - (reached?.at ?? samples[0]?.at ?? now)
      setState(member, member.lagMs <= maxLagMs ? 'up' : 'lagging')
    } catch (error) {
      if (!closed) setState(member, 'down', error)
    } finally {
      clearTimeout(timer)
      member.checking = false
    }
  }

  const poll = async () => {
    try {
      samples.push({ position: await position(), at: performance.now() })
      const horizon = performance.now() - 2 * maxLagMs - 2 * POLL_MS
      while (samples.length > 1 && (samples[0]?.at ?? 0) < horizon) samples.shift()
    } catch {
      // The primary is away: the replicas keep their state (reads go where they can).
    }
    await Promise.all(members.map(check))
  }
  await poll()
  const timer = setInterval(() => void poll(), POLL_MS)
  timer.unref()

  return {
    /**
     * A replica to read from: one that is up and has replayed `minimum` (a caller's last write),
     * in turn; undefined when none can serve (the read goes to the primary).
     */
    pick(minimum: bigint | undefined): Replica | undefined {
      for (let tried = 0; tried < members.length; tried++) {
        const member = members[next++ % members.length]
        if (member?.state !== 'up') continue
        if (minimum !== undefined && (member.replayed === undefined || member.replayed < minimum)) continue
        member.reads++
        return member
      }
      primaryReads++
      return undefined
    },
    /** A read failed on this replica: left out until a poll reaches it again. */
    failed(name: string, error: unknown) {
      const member = members.find((each) => each.name === name)
      if (member) setState(member, 'down', error)
    },
    /** The primary's WAL position now: at or past every commit that finished before it was asked. */
    position,
    status(): ReplicaStatus[] {
      return members.map((member) => ({
        name: member.name,
        state: member.state,
        lagSeconds: member.lagMs === undefined ? null : Math.round(member.lagMs) / 1000,
      }))
    },
    /** Read statements routed so far, per server ("primary" or a replica's name). */
    reads(): Record<string, number> {
      return Object.fromEntries([['primary', primaryReads], ...members.map((member) => [member.name, member.reads])])
    },
    async close() {
      closed = true
      clearInterval(timer)
      await Promise.all(members.map((member) => member.handle.close()))
    },
  }
}

export type ReplicaSet = Awaited<ReturnType<typeof createReplicaSet>>
