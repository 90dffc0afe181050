/**
 * Starts the service and the baselines as child processes (`node --import tsx <entry>`), and the
 * peers (which run TypeScript themselves), all on the Node the harness names, each on its own
 * port, and waits until each answers HTTP. Their stderr is kept so a failed start says why.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { isPeer, type ServerName } from './scenarios.ts'

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))

export const SERVER_ENTRIES: Record<ServerName, string> = {
  service: 'src/server.ts',
  fastify: 'bench/baselines/fastify-rest.ts',
  apollo: 'bench/baselines/apollo-dataloader.ts',
  mercurius: 'bench/baselines/mercurius-jit.ts',
  postgraphile: 'bench/peers/postgraphile.ts',
  platformatic: 'bench/peers/platformatic.ts',
}

export interface RunningServer {
  name: ServerName
  pid: number
  baseUrl: string
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = address !== null && typeof address === 'object' ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

async function answersHttp(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) })
    await response.arrayBuffer()
    return true
  } catch {
    return false
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()))
}

/** Starts one server with exactly `env` (plus PATH and HOME) and returns once it answers HTTP. */
export async function startServer(
  name: ServerName,
  env: Record<string, string>,
  {
    startTimeoutMs = 60_000,
    profileDir,
    node = process.execPath,
  }: { startTimeoutMs?: number; profileDir?: string | undefined; node?: string } = {},
): Promise<RunningServer> {
  const port = await freePort()
  // Written when the server exits (SIGTERM from stop(), which every server handles), one file per
  // thread (tsx loads modules in a worker): the largest in <profileDir>/<name>/ is the main thread.
  const profiling = profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(profileDir, name)] : []
  // The peers run TypeScript themselves (Node 24 strips types); ours load through tsx.
  const loader = isPeer(name) ? [] : ['--import', 'tsx']
  const child = spawn(node, [...profiling, ...loader, SERVER_ENTRIES[name]], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000)
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + startTimeoutMs
  while (!(await answersHttp(`${baseUrl}/healthz`))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} while starting:\n${stderr}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`${name} did not answer within ${startTimeoutMs} ms:\n${stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const pid = child.pid
  if (pid === undefined) throw new Error(`${name} has no pid`)
  return {
    name,
    pid,
    baseUrl,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited(child)
      clearTimeout(timer)
    },
  }
}
