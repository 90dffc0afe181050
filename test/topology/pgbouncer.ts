/**
 * A PgBouncer of one test's own in front of a PostgreSQL server (Debian's `pgbouncer`): its config
 * file, user list, log and socket-less listener in a temporary directory, on a free 127.0.0.1
 * port, in transaction pooling mode with every other setting at its default. Stopped (SIGTERM)
 * and its directory removed when the test ends.
 *
 * PgBouncer refuses to run as root: then it runs as the `postgres` OS user through `runuser`, which
 * owns the directory (as for test/faults/private-cluster.ts).
 */
import { spawnSync } from 'node:child_process'
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from '../faults/private-cluster.ts'
import { binaryUnavailable, startDaemon, type Teardown } from './daemon.ts'

export const PGBOUNCER = '/usr/sbin/pgbouncer'

/** Why PgBouncer cannot run here, or undefined when it can (a test skips with it, except in CI). */
export function pgbouncerUnavailable(): string | undefined {
  return binaryUnavailable(PGBOUNCER, '--version', 'pgbouncer')
}

export interface PgBouncer {
  port: number
  /** `url` with its host and port replaced by PgBouncer's. */
  through(url: string): string
  log(): Promise<string>
}

/**
 * Starts PgBouncer in front of the server `serverUrl` names (its host and port; every database).
 * `settings` are more `[pgbouncer]` lines (`ignore_startup_parameters = statement_timeout`).
 */
export async function startPgBouncer(t: Teardown, serverUrl: string, settings: string[] = []): Promise<PgBouncer> {
  const server = new URL(serverUrl)
  const dir = await mkdtemp(join(tmpdir(), 'pgbouncer-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const port = await freePort()
  const user = decodeURIComponent(server.username || 'postgres')
  const log = join(dir, 'pgbouncer.log')
  await writeFile(join(dir, 'userlist.txt'), `"${user}" ""\n`)
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `logfile = ${log}`,
      ...settings,
      '',
    ].join('\n'),
  )
  const root = process.getuid?.() === 0
  if (root) {
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) await chown(join(dir, file), uid('postgres'), gid('postgres'))
  }
  const [file, args] = root
    ? ['runuser', ['-u', 'postgres', '--', PGBOUNCER, join(dir, 'pgbouncer.ini')]]
    : [PGBOUNCER, [join(dir, 'pgbouncer.ini')]]
  const daemon = startDaemon(t, file, args)

  const through = (url: string) => {
    const parsed = new URL(url)
    parsed.hostname = '127.0.0.1'
    parsed.port = String(port)
    return parsed.toString()
  }
  // Ready once it answers a query through itself.
  const deadline = Date.now() + 10_000
  for (;;) {
    const probe = new pg.Client({ connectionString: through(serverUrl) })
    try {
      await probe.connect()
      await probe.query('select 1')
      await probe.end()
      break
    } catch (error) {
      await probe.end().catch(() => {})
      if (daemon.exited() || Date.now() > deadline)
        throw new Error(`PgBouncer did not start: ${String(error)}\n${daemon.stderr()}\n${await readFile(log, 'utf8').catch(() => '')}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { port, through, log: () => readFile(log, 'utf8').catch(() => '') }
}

function uid(name: string): number {
  return Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim())
}
function gid(name: string): number {
  return Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim())
}
