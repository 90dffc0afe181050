// Runs once in CI: its server runs on an in-memory PGlite whatever DATABASE_URL says, so .ci/run runs it in the embedded-database run only.
/**
 * `kill -TERM` of the `npm start` process, what a process manager does, stops the server (decisions
 * §13, "Front doors"): npm forwards the signal to its child, and the script `exec`s node, so that child is the
 * server itself rather than a shell that would not pass the signal on (dash, /bin/sh here, does
 * not: the server was left running, orphaned). A real `npm start` in its own process group; the
 * test asserts the port closes and no process of the group is left.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { TEST_JWT_SECRET } from '../helper.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')

/** The pids of a process group, read from /proc (field 5 of /proc/<pid>/stat is the group). */
function groupMembers(pgid: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry))
    } catch {
      // The process ended while it was read.
    }
  }
  return members
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

t.test('SIGTERM to the npm start process stops the server: its port closes, no process is left', { timeout: 180_000 }, async (t) => {
  const npm = spawn('npm', ['start'], {
    cwd: root,
    // Its own process group, so that whatever it starts can be found (and cleaned up if the test fails).
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: 'memory://',
      PORT: '0',
      HOST: '127.0.0.1',
      REDIS_URL: '',
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN: '0s',
      JWT_SECRET: TEST_JWT_SECRET,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const pgid = npm.pid!
  t.teardown(() => {
    for (const pid of groupMembers(pgid)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }
  })
  let stderr = ''
  const port = await new Promise<number>((resolve, reject) => {
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
      const listening = /REST API\s+http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr)
      if (listening) resolve(Number(listening[1]))
    })
    npm.on('exit', (code) => reject(new Error(`npm start exited with ${code}: ${stderr}`)))
  })
  t.ok(await portOpen(port), `the server listens on ${port}`)
  t.ok(groupMembers(pgid).length >= 2, 'npm and the server it started')

  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
  process.kill(pgid, 'SIGTERM')
  await exited
  const deadline = Date.now() + 30_000
  while ((await portOpen(port)) || groupMembers(pgid).length > 0) {
    if (Date.now() > deadline) break
    await sleep(100)
  }
  t.notOk(await portOpen(port), 'the port is closed')
  t.same(groupMembers(pgid), [], 'no process of npm start is left')
})
