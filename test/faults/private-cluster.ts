/**
 * A PostgreSQL 15 cluster of one test's own, for faults that must never touch the machine's shared
 * server: restarting it, stopping it, starting it again. Everything lives in a temporary directory
 * (data, Unix socket, server log); the server listens on a free 127.0.0.1 port with trust
 * authentication and holds the project's migrated, seeded database. It is stopped and the directory
 * removed when the test ends.
 *
 *   const cluster = await startPrivateCluster(t)
 *   const database = await createDatabase({ url: cluster.url })    // src/db/database.ts
 *   await cluster.restart()                                        // every client is disconnected
 *
 * PostgreSQL refuses to run as root: when the tests run as root (CI, the development machine),
 * initdb and pg_ctl run as the `postgres` OS user through `runuser`, and that user owns the
 * directory. Durability is off (fsync, full-page writes): a crash of the machine loses nothing a
 * test needs, and a restart (`pg_ctl restart -m fast`) still shuts down cleanly.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { buildPostgresTemplate, createFromTemplate } from '../setup/templates.ts'

const run = promisify(execFile)

/** Where Debian's postgresql-15 package puts initdb and pg_ctl. */
export const POSTGRES_BIN_DIR = '/usr/lib/postgresql/15/bin'
/** The migrated, seeded database of a cluster; cloneDatabase copies its template. */
const DATABASE = 'api'
/** How long pg_ctl waits for the server to start or stop. */
export const PG_CTL_WAIT_SECONDS = '30'

type Teardown = { teardown(fn: () => unknown): void }

export type StopMode = 'smart' | 'fast' | 'immediate'

export interface PrivateCluster {
  port: number
  /** The temporary directory: `data/`, the Unix socket and `server.log`. */
  dir: string
  /** `postgres://postgres@127.0.0.1:<port>/api`: the migrated, seeded database. */
  url: string
  /** A fresh database cloned from the migrated, seeded template; returns its URL. */
  cloneDatabase(): Promise<string>
  /** `pg_ctl stop`: `fast` (the default) disconnects every client, as an operator's restart does; `immediate` is a crash. */
  stop(mode?: StopMode): Promise<void>
  /** `pg_ctl start`, waiting until the server accepts connections. */
  start(): Promise<void>
  /** `pg_ctl restart` (fast by default): every connection is cut, the server is back when this resolves. */
  restart(mode?: StopMode): Promise<void>
  /** The server's log so far, for a failing test's message. */
  serverLog(): Promise<string>
}

export interface PrivateClusterOptions {
  /** More postgresql.conf settings, such as `{ max_connections: 20 }`. */
  settings?: Record<string, string | number>
}

/**
 * Why a private cluster cannot start here, or undefined when it can: a test skips with the reason,
 * except in CI, which must be able to run it.
 */
export function privateClusterUnavailable(): string | undefined {
  if (!existsSync(join(POSTGRES_BIN_DIR, 'initdb'))) return `no PostgreSQL 15 binaries in ${POSTGRES_BIN_DIR} (Debian's postgresql-15)`
  return undefined
}

/** The command as the cluster's owner: the `postgres` OS user when running as root, else the current user. */
function asOwner(command: string, args: string[]): [string, string[]] {
  const path = join(POSTGRES_BIN_DIR, command)
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args]
}

export async function owned(command: string, args: string[]): Promise<void> {
  const [file, fileArgs] = asOwner(command, args)
  try {
    await run(file, fileArgs)
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string }
    throw new Error(`${command} ${args.join(' ')} failed: ${stderr || stdout || String(error)}`)
  }
}

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (typeof address !== 'object' || address === null) throw new Error('no port')
  return address.port
}

/** Starts a cluster of the calling test's own (see above); it is removed when the test ends. */
export async function startPrivateCluster(t: Teardown, options: PrivateClusterOptions = {}): Promise<PrivateCluster> {
  const unavailable = privateClusterUnavailable()
  if (unavailable) throw new Error(`cannot start a private PostgreSQL cluster: ${unavailable}`)
  const dir = await mkdtemp(join(tmpdir(), 'private-pg-'))
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  let running = false
  // Registered first, so that a cluster that fails half-way through starting is removed too.
  t.teardown(async () => {
    if (running) await owned('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', PG_CTL_WAIT_SECONDS]).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })
  if (process.getuid?.() === 0) await run('chown', ['postgres:', dir])

  await owned('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync', '--no-instructions'])
  const port = await freePort()
  const settings: Record<string, string | number> = {
    listen_addresses: "'127.0.0.1'",
    port,
    unix_socket_directories: `'${dir}'`,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    shared_buffers: "'32MB'",
    max_connections: 50,
    ...options.settings,
  }
  await appendFile(
    join(data, 'postgresql.conf'),
    `\n# private test cluster (test/faults/private-cluster.ts)\n${Object.entries(settings)
      .map(([name, value]) => `${name} = ${value}`)
      .join('\n')}\n`,
  )

  const pgCtl = (action: 'start' | 'stop' | 'restart', mode?: StopMode) =>
    owned('pg_ctl', [action, '-D', data, '-l', log, '-w', '-t', PG_CTL_WAIT_SECONDS, ...(mode ? ['-m', mode] : [])])
  await pgCtl('start')
  running = true

  const serverUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
  // The migrated, seeded template (postgres_template, as the shared server's runs have theirs),
  // and the database the test uses, cloned from it.
  await buildPostgresTemplate(serverUrl)
  let clones = 0
  const url = await createFromTemplate(serverUrl, DATABASE)

  return {
    port,
    dir,
    url,
    cloneDatabase: () => createFromTemplate(serverUrl, `${DATABASE}_${++clones}`),
    async stop(mode = 'fast') {
      await pgCtl('stop', mode)
      running = false
    },
    async start() {
      await pgCtl('start')
      running = true
    },
    async restart(mode = 'fast') {
      await pgCtl('restart', mode)
      running = true
    },
    serverLog: () => readFile(log, 'utf8').catch(() => ''),
  }
}
