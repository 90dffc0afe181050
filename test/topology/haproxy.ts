/**
 * An HAProxy of one test's own (Debian's `haproxy`) balancing HTTP and WebSockets over service
 * instances on fixed 127.0.0.1 ports, health-checking each with `GET /readyz` every 300 ms (out
 * after 2 failures, back after 1 success), retrying a request whose connection failed or came back
 * empty on another instance. Its config, log-less, and its stats socket live in a temporary
 * directory; it is stopped when the test ends. The settings are docs/operations.md's (Behind PgBouncer and a load balancer).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../faults/private-cluster.ts'
import { binaryUnavailable, startDaemon, type Teardown } from './daemon.ts'

export const HAPROXY = '/usr/sbin/haproxy'

/** Why HAProxy cannot run here, or undefined when it can (a test skips with it, except in CI). */
export function haproxyUnavailable(): string | undefined {
  return binaryUnavailable(HAPROXY, '-v', 'haproxy')
}

export interface HaProxy {
  baseUrl: string
  /** Each instance's state as HAProxy sees it (`UP`, `DOWN`, `UP 1/2`…), by its port. */
  states(): Promise<Map<number, string>>
  /** Resolves once HAProxy sees the instance on `port` as fully UP (or rejects after `timeoutMs`). */
  waitUntilUp(port: number, timeoutMs?: number): Promise<void>
}

export async function startHaProxy(t: Teardown, instancePorts: number[]): Promise<HaProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'haproxy-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const port = await freePort()
  const socket = join(dir, 'stats.sock')
  const config = [
    'global',
    `  stats socket ${socket} level user`,
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout check 3s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout tunnel 1h',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend instances',
    'backend instances',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  default-server inter 300ms fall 2 rise 1',
    ...instancePorts.map((instance) => `  server i${instance} 127.0.0.1:${instance} check`),
    '',
  ].join('\n')
  await writeFile(join(dir, 'haproxy.cfg'), config)
  const daemon = startDaemon(t, HAPROXY, ['-db', '-f', join(dir, 'haproxy.cfg')])

  const command = (line: string) =>
    new Promise<string>((resolve, reject) => {
      let answer = ''
      const connection = connect(socket)
      connection.setEncoding('utf8')
      connection.on('data', (chunk: string) => void (answer += chunk))
      connection.on('end', () => resolve(answer))
      connection.on('error', reject)
      connection.end(`${line}\n`)
    })
  const states = async () => {
    // `show stat` is CSV: pxname,svname,…,status (the 18th column).
    const rows = (await command('show stat')).split('\n').map((row) => row.split(','))
    const result = new Map<number, string>()
    for (const row of rows) if (row[0] === 'instances' && row[1]?.startsWith('i')) result.set(Number(row[1].slice(1)), row[17] ?? '')
    return result
  }
  const deadline = Date.now() + 10_000
  for (;;) {
    if (daemon.exited()) throw new Error(`haproxy exited: ${daemon.stderr()}`)
    try {
      await states()
      break
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`haproxy did not start: ${String(error)} ${daemon.stderr()}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    states,
    async waitUntilUp(instance, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs
      while ((await states()).get(instance) !== 'UP') {
        if (Date.now() > until) throw new Error(`instance ${instance} is not UP in haproxy: ${JSON.stringify([...(await states())])}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
  }
}
