/**
 * Fault tests run the service as `npm start` runs it — src/server.ts in a process of its own — on
 * a private clone of the test template, so that a fault can be aimed at exactly that database and
 * a crash shows as the process exiting.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { TEST_JWT_SECRET } from '../helper.ts'
import { createFromTemplate, dropServerDatabase, templateDatabaseName } from '../setup/templates.ts'

type Teardown = { teardown(fn: () => unknown): void }

export interface ClonedDatabase {
  name: string
  url: string
}

/** `CREATE DATABASE … TEMPLATE` the migrated, seeded template; dropped when the test ends. */
export async function cloneDatabase(t: Teardown, serverUrl: string): Promise<ClonedDatabase> {
  const name = `${templateDatabaseName(serverUrl).replace(/_template$/, '')}_f_${process.pid}_${randomBytes(4).toString('hex')}`
  const url = await createFromTemplate(serverUrl, name)
  t.teardown(() => dropServerDatabase(serverUrl, name))
  return { name, url }
}

export interface ServerProcess {
  baseUrl: string
  child: ChildProcess
  /** Set once the process has exited, with how. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  /** Log lines at warn level or above (pino level ≥ 40), parsed. */
  warnings: Array<{ level: number; msg: string; err?: { message?: string } }>
  /** The message of every log line so far, in order. */
  messages: string[]
  /** Everything the process wrote to stderr. */
  stderr: string
}

/** Starts src/server.ts on `databaseUrl` and resolves once it listens. Killed when the test ends. */
export async function startServer(t: Teardown, databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: TEST_JWT_SECRET,
      SEED: 'false',
      LOG_LEVEL: 'info',
      REDIS_URL: '',
      // The load of a fault test comes from one caller; the rate limit is not what is tested.
      RATE_LIMIT_MAX: '1000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const server: ServerProcess = { baseUrl: '', child, exit: undefined, warnings: [], messages: [], stderr: '' }
  child.on('exit', (code, signal) => {
    server.exit = { code, signal }
  })
  t.teardown(() => {
    if (!server.exit) child.kill('SIGKILL')
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    server.stderr += chunk
  })
  // The log is read to its end: a pipe nobody drains would block the server's writes.
  const listening = new Promise<string>((resolve, reject) => {
    child.on('exit', (code, signal) =>
      reject(new Error(`the server exited before listening (code ${code}, signal ${signal}): ${server.stderr}`)),
    )
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: { level?: number; msg?: string; err?: { message?: string } }
      try {
        entry = JSON.parse(line) as typeof entry
      } catch {
        return
      }
      if (entry.msg !== undefined) server.messages.push(entry.msg)
      const address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(entry.msg ?? '')?.[1]
      if (address) resolve(address)
      if ((entry.level ?? 0) >= 40)
        server.warnings.push({ level: entry.level!, msg: entry.msg ?? '', ...(entry.err ? { err: entry.err } : {}) })
    })
  })
  server.baseUrl = await listening
  return server
}
