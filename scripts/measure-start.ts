/**
 * Start-to-ready, as a newcomer sees it: spawns `node --import tsx src/server.ts` (what `npm start`
 * runs) on a fresh PGlite data directory, polls /readyz every 20 ms until it answers 200, and
 * prints the milliseconds, wall clock and the server's CPU time (user + system, from /proc on
 * Linux: the fairer number on a loaded machine); then once more on the same (now migrated and
 * seeded) directory.
 *   npm run -s measure:start [-- --runs 3] [-- --dist]   (--dist starts dist/src/server.js instead)
 */
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, dist: { type: 'boolean', default: false } } })

/** CPU milliseconds a process has used so far (Linux /proc; NaN elsewhere). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
  return fields.length > 13 ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : Number.NaN
}

async function once(dataDir: string, port: number): Promise<{ wall: number; cpu: number }> {
  const started = performance.now()
  const args = values.dist ? ['dist/src/server.js'] : ['--import', 'tsx', 'src/server.ts']
  const child = spawn(process.execPath, args, {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.status === 200,
        () => false,
      )
      if (ready) return { wall: performance.now() - started, cpu: await cpuMs(child.pid!) }
      await sleep(20)
    }
  } finally {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
  }
}

const fresh: Array<{ wall: number; cpu: number }> = []
const again: Array<{ wall: number; cpu: number }> = []
for (let run = 0; run < Number(values.runs); run++) {
  const dataDir = await mkdtemp(join(tmpdir(), 'measure-start-'))
  try {
    fresh.push(await once(dataDir, 39_000 + run))
    again.push(await once(dataDir, 39_100 + run))
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const show = (runs: Array<{ wall: number; cpu: number }>) => {
  const wall = runs.map((run) => run.wall)
  const cpu = runs.map((run) => run.cpu)
  return `wall ${wall.map(Math.round).join(', ')} ms (median ${Math.round(median(wall))}); CPU ${cpu.map(Math.round).join(', ')} ms (median ${Math.round(median(cpu))})`
}
console.log(`first start (migrate + seed): ${show(fresh)}`)
console.log(`second start:                 ${show(again)}`)
