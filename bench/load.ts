/**
 * The load generators of the bench: wrk (Debian's package, a C program in a process of its own) when
 * it is on the PATH, else autocannon in the harness's own process. Both answer the same LoadResult,
 * so the harness neither knows nor cares which one ran; the results name it (docs/performance.md,
 * "The load generator").
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import autocannon from 'autocannon'
import { field } from './json.ts'
import type { BenchRequest } from './scenarios.ts'
import { newIdempotencyKey } from './scenarios.ts'

export type LoadGeneratorName = 'wrk' | 'autocannon'

export interface LoadSettings {
  /** How long to load (ignored when `amount` is set). */
  seconds: number
  connections: number
  /** Requests per second over all connections (a fixed-rate round), or a maximum-throughput round. */
  rate?: number | undefined
  /** A number of requests instead of a duration (the statement-counting pass; autocannon only). */
  amount?: number | undefined
}

export interface LoadResult {
  /** Answers with a 2xx status, and with any other. */
  ok: number
  non2xx: number
  /** Connection, read and write errors. */
  errors: number
  timeouts: number
  /** Requests sent, those still in flight when the load stopped included. */
  sent: number
  requestsPerSecond: number
  /** Latency percentiles in milliseconds (wrk: microsecond resolution; autocannon: whole ms). */
  latencyMs: { p50: number; p99: number }
  /** Bytes read from the sockets, headers included. */
  bytesRead: number
  /** GraphQL answers with `errors` (GraphQL requests only). */
  graphqlErrors: number
}

export interface LoadGenerator {
  name: LoadGeneratorName
  /** One line for the results' method. */
  description: string
  load(baseUrl: string, request: BenchRequest, settings: LoadSettings): Promise<LoadResult>
}

const run = promisify(execFile)

/** wrk's path when it is installed, else null. */
export async function findWrk(): Promise<string | null> {
  for (const folder of (process.env.PATH ?? '').split(path.delimiter).concat(['/usr/bin'])) {
    const candidate = path.join(folder, 'wrk')
    try {
      await run(candidate, ['-v'])
      return candidate
    } catch (error) {
      // `wrk -v` prints its version and exits with 1: it ran, so it is there.
      if (typeof error === 'object' && error !== null && 'code' in error && error.code === 1) return candidate
    }
  }
  return null
}

/** The generator asked for, or wrk when it is installed and autocannon when it is not. */
export async function chooseLoadGenerator(asked: LoadGeneratorName | undefined, log: (line: string) => void): Promise<LoadGenerator> {
  if (asked === 'autocannon') return autocannonGenerator()
  const wrk = await findWrk()
  if (wrk) return wrkGenerator(wrk)
  if (asked === 'wrk') throw new Error('--load-generator wrk: wrk is not installed (apt-get install -y wrk)')
  log(
    'wrk is not installed (apt-get install -y wrk): the load comes from autocannon in the harness process, which shares the cores with what it measures',
  )
  return autocannonGenerator()
}

export function autocannonGenerator(): LoadGenerator {
  return {
    name: 'autocannon',
    description: 'autocannon 9 (programmatic API, in the harness process; latency read in whole milliseconds)',
    async load(baseUrl, request, settings) {
      let graphqlErrors = 0
      const result = await autocannon({
        url: baseUrl,
        connections: settings.connections,
        ...(settings.amount ? { amount: settings.amount } : { duration: settings.seconds }),
        ...(settings.rate ? { overallRate: settings.rate } : {}),
        requests: [
          {
            method: request.method,
            path: request.path,
            headers: request.headers,
            ...(request.body ? { body: request.body } : {}),
            ...(request.freshIdempotencyKey
              ? { setupRequest: (raw) => ({ ...raw, headers: { ...raw.headers, 'idempotency-key': newIdempotencyKey() } }) }
              : {}),
            ...(request.graphql
              ? {
                  onResponse: (_status: number, body: string) => {
                    if (body.includes('"errors"')) graphqlErrors++
                  },
                }
              : {}),
          },
        ],
      })
      const answered = result['2xx'] + result.non2xx
      return {
        ok: result['2xx'],
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        sent: Math.max(answered, result.requests.sent),
        requestsPerSecond: result.requests.average,
        latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
        bytesRead: result.throughput.total,
        graphqlErrors,
      }
    },
  }
}

/** A Lua string literal of `text`. */
const lua = (text: string): string => `"${[...Buffer.from(text, 'utf8')].map((byte) => `\\${byte}`).join('')}"`

/**
 * wrk's script for one request: the request itself (a new Idempotency-Key each time where the
 * request needs one), a GraphQL body check, the pacing of a fixed-rate round, and a last line of
 * JSON with what LoadResult needs. One wrk thread: it drives 50 connections with a fraction of a
 * core, and one thread keeps the counters in one Lua state.
 */
export function wrkScript(request: BenchRequest, settings: Pick<LoadSettings, 'rate'>, keyPrefix: string): string {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`)
    .join('\n')
  return `
wrk.method = ${lua(request.method)}
wrk.path = ${lua(request.path)}
${request.body === undefined ? '' : `wrk.body = ${lua(request.body)}`}
${headers}

local threads = {}
function setup(thread) table.insert(threads, thread) end

sent = 0
non2xx = 0
graphqlErrors = 0

${
  request.freshIdempotencyKey
    ? `
local prefix = ${lua(keyPrefix)}
function request()
  sent = sent + 1
  wrk.headers["Idempotency-Key"] = prefix .. sent
  return wrk.format()
end`
    : settings.rate
      ? `
function request()
  sent = sent + 1
  return wrk.format()
end`
      : ''
}

${
  request.graphql
    ? `
function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
  if body and string.find(body, '"errors"', 1, true) then graphqlErrors = graphqlErrors + 1 end
end`
    : ''
}

${
  settings.rate
    ? `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *now);
]]
local now = ffi.new("bench_timespec")
local function milliseconds()
  ffi.C.clock_gettime(1, now)
  return tonumber(now.tv_sec) * 1000 + tonumber(now.tv_nsec) / 1000000
end
-- One schedule for every connection: request k is due at start + k / rate, whichever
-- connection is free; wrk waits the returned milliseconds before sending.
local interval = 1000 / ${settings.rate}
local due = nil
function delay()
  local at = milliseconds()
  if due == nil then due = at end
  local wait = due - at
  due = due + interval
  if wait <= 0 then return 0 end
  return math.floor(wait)
end`
    : ''
}

function done(summary, latency, requests)
  local t = threads[1]
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"duration":%d,"requests":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"sent":%d,"non2xx":%d,"graphqlErrors":%d}\\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), t:get("sent"), t:get("non2xx"), t:get("graphqlErrors")))
end
`
}

interface WrkSummary {
  duration: number
  requests: number
  bytes: number
  connect: number
  read: number
  write: number
  status: number
  timeout: number
  p50: number
  p99: number
  sent: number
  non2xx: number
  graphqlErrors: number
}

/** The script's last line, every field a number, or an error that says what wrk printed. */
function parseWrkSummary(line: string): WrkSummary {
  const parsed: unknown = JSON.parse(line)
  const number = (name: keyof WrkSummary): number => {
    const value = field(parsed, name)
    if (typeof value !== 'number') throw new Error(`wrk's result lacks ${name}: ${line}`)
    return value
  }
  return {
    duration: number('duration'),
    requests: number('requests'),
    bytes: number('bytes'),
    connect: number('connect'),
    read: number('read'),
    write: number('write'),
    status: number('status'),
    timeout: number('timeout'),
    p50: number('p50'),
    p99: number('p99'),
    sent: number('sent'),
    non2xx: number('non2xx'),
    graphqlErrors: number('graphqlErrors'),
  }
}

export function wrkGenerator(wrk: string): LoadGenerator {
  return {
    name: 'wrk',
    description:
      "wrk 4 (Debian's package: a process of its own, one thread; latency read in microseconds; a Lua script for the new Idempotency-Key of each create, the GraphQL answers' errors and the fixed rate's pacing)",
    async load(baseUrl, request, settings) {
      // wrk reads whole seconds.
      if (settings.amount) throw new Error('wrk runs for a duration, not a number of requests')
      const folder = await mkdtemp(path.join(os.tmpdir(), 'bench-wrk-'))
      try {
        const script = path.join(folder, 'load.lua')
        await writeFile(script, wrkScript(request, settings, `bench-${randomBytes(6).toString('hex')}-`))
        const { stdout } = await run(
          wrk,
          [
            '-t1',
            `-c${settings.connections}`,
            `-d${Math.max(1, Math.round(settings.seconds))}s`,
            '--timeout',
            '10s',
            '-s',
            script,
            baseUrl,
          ],
          { maxBuffer: 1 << 20 },
        )
        const line = stdout.split('\n').find((text) => text.startsWith('WRK_RESULT '))
        if (!line) throw new Error(`wrk printed no result: ${stdout.slice(0, 500)}`)
        const summary = parseWrkSummary(line.slice('WRK_RESULT '.length))
        // A closed loop keeps one request in flight on every open connection when wrk stops; a
        // fixed-rate round counts what it sent.
        const sent = request.freshIdempotencyKey || settings.rate ? summary.sent : summary.requests + settings.connections
        // Without a response function (REST) wrk reads no body into Lua, and counts statuses over 399.
        const non2xx = request.graphql ? summary.non2xx : summary.status
        return {
          ok: summary.requests - non2xx,
          non2xx,
          errors: summary.connect + summary.read + summary.write,
          timeouts: summary.timeout,
          sent: Math.max(sent, summary.requests),
          requestsPerSecond: summary.requests / (summary.duration / 1e6),
          latencyMs: { p50: summary.p50 / 1000, p99: summary.p99 / 1000 },
          bytesRead: summary.bytes,
          graphqlErrors: summary.graphqlErrors,
        }
      } finally {
        await rm(folder, { recursive: true, force: true })
      }
    },
  }
}
