/**
 * Start-to-ready, as a newcomer sees it: spawns `node --import tsx src/server.ts` (what `npm start`
 * runs) on a fresh PGlite data directory, polls /readyz every 20 ms until it answers 200, and
 * prints the milliseconds; then once more on the same (now migrated and seeded) directory.
 *   npm run -s measure:start [-- --runs 3] [-- --dist]   (--dist starts dist/src/server.js instead)
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, dist: { type: 'boolean', default: false } } })

async function once(dataDir: string, port: number): Promise<number> {
  const started = performance.now()
  const args = values.dist ? ['dist/src/server.js'] : ['--import', 'tsx', 'src/server.ts']
  const child = spawn(process.execPath, args, {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.status === 200, () => false)
      if (ready) return performance.now() - started
      await sleep(20)
    }
  } finally {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
  }
}

const fresh: number[] = []
const again: number[] = []
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
const show = (values: number[]) => `${values.map((v) => Math.round(v)).join(', ')} ms (median ${Math.round(median(values))} ms)`
console.log(`first start (migrate + seed): ${show(fresh)}`)
console.log(`second start:                 ${show(again)}`)
