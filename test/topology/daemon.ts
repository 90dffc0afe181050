/**
 * What the topology tests' daemons (Debian's haproxy and pgbouncer) share: whether the binary is
 * here, and running it in the foreground for one test, stopped (SIGTERM) when the test ends.
 */
import { spawn, spawnSync } from 'node:child_process'

export type Teardown = { teardown(fn: () => unknown): void }

/** Why `binary` cannot run here (its `versionFlag` fails), or undefined when it can (a test skips with it, except in CI). */
export function binaryUnavailable(binary: string, versionFlag: string, debianPackage: string): string | undefined {
  return spawnSync(binary, [versionFlag]).status === 0 ? undefined : `no ${binary} (Debian's ${debianPackage})`
}

export interface Daemon {
  /** What it wrote on stderr so far (for the error when it does not start). */
  stderr(): string
  exited(): boolean
}

/** Starts `file args` in the foreground; it is stopped with SIGTERM, and awaited, when the test ends. */
export function startDaemon(t: Teardown, file: string, args: string[]): Daemon {
  const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk))
  let exited = false
  child.on('exit', () => void (exited = true))
  t.teardown(async () => {
    if (exited) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await gone
  })
  return { stderr: () => stderr, exited: () => exited }
}
