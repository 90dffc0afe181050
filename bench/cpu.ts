/**
 * CPU time of processes from /proc/<pid>/stat (utime + stime, in clock ticks). Linux only; where
 * /proc is missing the bench reports CPU as unknown (null) rather than guessing.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

let ticksPerSecond: number | undefined

function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/** CPU milliseconds the process has used so far (user + system), or undefined when unreadable. */
export function cpuMilliseconds(pid: number): number | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // Fields after the command name (which may hold spaces) start at the state, field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  return ((utime + stime) * 1000) / clockTicksPerSecond()
}

/** CPU milliseconds of each readable process, by pid. */
export function cpuOfProcesses(pids: readonly number[]): Map<number, number> {
  const result = new Map<number, number>()
  for (const pid of pids) {
    const ms = cpuMilliseconds(pid)
    if (ms !== undefined) result.set(pid, ms)
  }
  return result
}

/**
 * CPU used between two snapshots of a set of processes: a process that appears only in the
 * second (a connection opened during the round) counts from zero.
 */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0)
  return total
}
