/**
 * A streaming replica of a private cluster (private-cluster.ts), for the read-replica tests: taken
 * with `pg_basebackup -R` (which writes the standby's connection and `standby.signal`), listening on
 * a free port of its own, stopped and removed when the test ends. Replay can be paused and resumed
 * (`pg_wal_replay_pause()`), which makes it lag as a slow replica does; it can be stopped and started.
 */
import { execFile } from 'node:child_process'
import { appendFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort, owned, PG_CTL_WAIT_SECONDS, type PrivateCluster } from './private-cluster.ts'

const run = promisify(execFile)

export interface PrivateReplica {
  /** The replica's copy of the primary's `api` database. */
  url: string
  stop(): Promise<void>
  start(): Promise<void>
  /** Runs `statement` on the replica (pg_wal_replay_pause() and the like). */
  query(statement: string): Promise<pg.QueryResult>
  /** Resolves once the replica has replayed everything the primary had written when this was called. */
  caughtUp(): Promise<void>
}

export async function startPrivateReplica(t: { teardown(fn: () => unknown): void }, primary: PrivateCluster): Promise<PrivateReplica> {
  const dir = await mkdtemp(join(tmpdir(), 'private-pg-replica-'))
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  let running = false
  t.teardown(async () => {
    if (running) await owned('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', PG_CTL_WAIT_SECONDS]).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })
  if (process.getuid?.() === 0) await run('chown', ['postgres:', dir])
  await owned('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    // A fast checkpoint to start from: the default spreads it over most of checkpoint_timeout (minutes).
    '--checkpoint=fast',
    '--no-sync',
  ])
  const port = await freePort()
  await appendFile(
    join(data, 'postgresql.conf'),
    `\n# private replica\nport = ${port}\nunix_socket_directories = '${dir}'\nhot_standby = on\n`,
  )
  const pgCtl = (action: 'start' | 'stop') =>
    owned('pg_ctl', [action, '-D', data, '-l', log, '-w', '-t', PG_CTL_WAIT_SECONDS, ...(action === 'stop' ? ['-m', 'fast'] : [])])
  await pgCtl('start')
  running = true
  const url = primary.url.replace(`:${primary.port}/`, `:${port}/`)
  const query = async (statement: string, target = url) => {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    try {
      return await client.query(statement)
    } finally {
      await client.end()
    }
  }
  return {
    url,
    query,
    async stop() {
      await pgCtl('stop')
      running = false
    },
    async start() {
      await pgCtl('start')
      running = true
    },
    async caughtUp() {
      const primaryAt = (await query('select pg_current_wal_lsn()::text as lsn', primary.url)).rows[0].lsn
      for (let attempt = 0; attempt < 200; attempt++) {
        const behind = await query(`select pg_last_wal_replay_lsn() < '${primaryAt}'::pg_lsn as behind`)
        if (!behind.rows[0].behind) return
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error('the replica did not catch up')
    },
  }
}
