/**
 * /readyz follows the service out of a database freeze (docs/operations.md): the postmaster and
 * every backend of a cluster of this test's own are stopped (SIGSTOP) long enough for the LISTEN
 * connection to be dropped and its reconnection to back off, then continued; the first probe after
 * a request succeeds again answers ready, not 503 EVENTS_UNAVAILABLE while the listener waits out
 * its backoff. The service runs as its own process, directly on the cluster (LISTEN on DATABASE_URL).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { bearer } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { privateClusterUnavailable, startPrivateCluster } from './private-cluster.ts'
import { startServer } from './server-process.ts'

const run = promisify(execFile)

const SKIP = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set); it freezes a cluster of its own'
  : process.env.CI
    ? false
    : (privateClusterUnavailable() ?? false)

// A private cluster's start and a 15 s freeze take a minute or two on a loaded 2-core machine,
// longer than the suite's per-file default.
t.setTimeout(300_000)

/** How long the database stays frozen: past the listener's heartbeat timeout and a few reconnections. */
const FREEZE_MS = 15_000

/** The cluster's postmaster and its children (backends, background workers): this test's own processes. */
async function clusterProcesses(dir: string): Promise<number[]> {
  const postmaster = Number((await readFile(join(dir, 'data', 'postmaster.pid'), 'utf8')).split('\n')[0])
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(postmaster)])
  return [postmaster, ...stdout.split('\n').filter(Boolean).map(Number)]
}

t.test('after a database freeze /readyz is ready by the first probe after a request succeeds again', { skip: SKIP }, async (t) => {
  const cluster = await startPrivateCluster(t)
  const url = await cluster.cloneDatabase()
  const server = await startServer(t, url)
  const get = async (path: string) => {
    try {
      return (await fetch(`${server.baseUrl}${path}`, { headers: bearer(2, 'orders:read'), signal: AbortSignal.timeout(5000) })).status
    } catch {
      return 0
    }
  }
  t.equal(await get('/readyz'), 200, 'ready before the freeze')

  const frozen = await clusterProcesses(cluster.dir)
  let thawed = false
  const thaw = () => {
    if (thawed) return
    thawed = true
    for (const pid of frozen.reverse()) {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {}
    }
  }
  t.teardown(thaw)
  for (const pid of frozen) process.kill(pid, 'SIGSTOP')
  await sleep(FREEZE_MS)
  t.not(await get('/readyz'), 200, 'not ready while the database is frozen')
  thaw()

  // Requests until one succeeds; the probe right after it must be ready.
  const deadline = Date.now() + 60_000
  let served = 0
  while (served !== 200) {
    if (Date.now() > deadline) throw new Error(`no request succeeded within 60 s of the thaw (last ${served})`)
    served = await get('/api/v1/orders/1')
    if (served !== 200) await sleep(50)
  }
  const probe = await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(5000) })
  t.equal(probe.status, 200, 'the first probe after a successful request is ready')
  if (probe.status !== 200) t.comment(await probe.text())
})
