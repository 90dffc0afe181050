/**
 * A PostgreSQL restart behind PgBouncer, with the settings docs/operations.md tells operators to
 * change (`server_login_retry`, `server_connect_timeout`): the service answers again within a few
 * seconds of the server being back. With PgBouncer's defaults a login that failed during the
 * restart makes it refuse the database for `server_login_retry` (15 s) after the server is back,
 * every request meanwhile a 503. PgBouncer and the cluster are this test's own; the service runs
 * as its own process through PgBouncer, and requests go on during the restart (as a client's do,
 * which is what makes PgBouncer try, and fail, to log in while the server is down).
 * PGBOUNCER_RESTART_DEFAULTS=1 runs it with PgBouncer's defaults instead, to see it fail.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { bearer } from '../helper.ts'
import { postgresUrl } from '../setup/templates.ts'
import { privateClusterUnavailable, startPrivateCluster } from '../faults/private-cluster.ts'
import { startServer } from '../faults/server-process.ts'
import { pgbouncerUnavailable, startPgBouncer } from './pgbouncer.ts'

const SKIP = !postgresUrl()
  ? 'runs with the PostgreSQL suite (DATABASE_URL set); it restarts a cluster of its own behind a PgBouncer of its own'
  : process.env.CI
    ? false
    : (privateClusterUnavailable() ?? pgbouncerUnavailable() ?? false)

// A private cluster, a PgBouncer, the service and a restart take a minute or two on a loaded
// 2-core machine, longer than the suite's per-file default.
t.setTimeout(300_000)

/** What docs/operations.md ("Behind PgBouncer and a load balancer") recommends. */
const RESTART_SETTINGS = ['server_login_retry = 1', 'server_connect_timeout = 5']

/** Bounded generously (the recommended settings give about a second); PgBouncer's default gives 15 s. */
const BACK_WITHIN_MS = 8000
/** How long the server stays stopped during the restart. */
const DOWN_MS = 2000

t.test(
  'behind PgBouncer with the documented server_login_retry, a PostgreSQL restart costs seconds, not 15 s of 503',
  { skip: SKIP },
  async (t) => {
    const cluster = await startPrivateCluster(t)
    const url = await cluster.cloneDatabase()
    const bouncer = await startPgBouncer(t, cluster.url, process.env.PGBOUNCER_RESTART_DEFAULTS === '1' ? [] : RESTART_SETTINGS)
    const server = await startServer(t, bouncer.through(url), { EVENTS_DATABASE_URL: 'poll' })
    const read = async () => {
      try {
        const response = await fetch(`${server.baseUrl}/api/v1/orders/1`, {
          headers: bearer(2, 'orders:read'),
          signal: AbortSignal.timeout(5000),
        })
        await response.arrayBuffer()
        return response.status
      } catch {
        return 0
      }
    }
    t.equal(await read(), 200, 'served before the restart')

    // Requests all through the restart: PgBouncer tries to log in while the server is down.
    let restarting = true
    const load = (async () => {
      while (restarting) {
        await read()
        await sleep(50)
      }
    })()
    // A restart that keeps the server away for a moment (a configuration change, a minor upgrade).
    await cluster.stop('fast')
    await sleep(DOWN_MS)
    await cluster.start()
    const back = Date.now()
    restarting = false
    await load
    t.match(
      await bouncer.log(),
      /login failed|connect failed|server login has been failing/,
      'PgBouncer failed to reach the server during the restart (what server_login_retry governs)',
    )

    let status = await read()
    while (status !== 200 && Date.now() - back < BACK_WITHIN_MS) {
      await sleep(100)
      status = await read()
    }
    t.equal(status, 200, `served again within ${BACK_WITHIN_MS} ms of the server being back (${Date.now() - back} ms)`)
    if (status !== 200) t.comment(await bouncer.log())
  },
)
