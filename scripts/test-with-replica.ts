/**
 * `npm run test:replica [-- <tap arguments>]`: the REST and GraphQL read tests (`test/modules/`,
 * `test/graphql/`; other test files or directories when named) with one streaming replica
 * configured (decisions §15, docs/operations.md "Read replicas"), for CI.
 *
 * It starts a private PostgreSQL primary and a streaming replica of it (test/faults/private-cluster.ts
 * and private-replica.ts: never the machine's shared server), runs tap with DATABASE_URL at the
 * primary and TEST_DATABASE_REPLICA_URL at the replica, and stops both. test/helper.ts then builds
 * every app with DATABASE_REPLICA_URLS at the replica's copy of the test's own database, and before
 * each request waits until the replica has replayed every commit so far (a test's direct writes
 * through its database handle, another caller's writes, which the service lets a replica lag
 * behind on): the reads these tests make are served by the replica, with the answers they expect.
 * The primary commits synchronously (its WAL is sent at each commit), as a production primary
 * does; fsync stays off.
 *
 *   npm run test:replica                                   test/modules/ and test/graphql/
 *   npm run test:replica -- --jobs=1 test/modules/orders   tap options (as --name=value) and test files or directories
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startPrivateCluster } from '../test/faults/private-cluster.ts'
import { startPrivateReplica } from '../test/faults/private-replica.ts'
import { withDatabase } from '../test/setup/templates.ts'

const DEFAULT_DIRECTORIES = ['test/modules', 'test/graphql']

const teardowns: Array<() => unknown> = []
const owner = { teardown: (fn: () => unknown) => void teardowns.push(fn) }
let stopping: Promise<void> | undefined
const stop = () => {
  stopping ??= (async () => {
    for (const teardown of teardowns.reverse()) await teardown()
  })()
  return stopping
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stop().then(() => process.exit(130)))
}

/** tap takes test files, not directories: a directory stands for the test files under it. */
const testFiles = (path: string): string[] =>
  statSync(path).isDirectory()
    ? readdirSync(path, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.test.ts'))
        .sort()
        .map((file) => join(path, file))
    : [path]
const given = process.argv.slice(2)
const options = given.filter((arg) => arg.startsWith('-'))
const named = given.filter((arg) => !arg.startsWith('-'))
// A file marked "Runs once in CI" reads no database (.ci/run, test/ci-run-once.test.ts): a replica changes nothing for it.
const runsOnce = (file: string) => readFileSync(file, 'utf8').startsWith('// Runs once in CI:')
const files = (named.length > 0 ? named : DEFAULT_DIRECTORIES).flatMap(testFiles).filter((file) => !runsOnce(file))
const started = performance.now()
let exitCode = 1
try {
  const primary = await startPrivateCluster(owner, {
    settings: {
      synchronous_commit: 'on',
      wal_writer_delay: "'10ms'",
      // Every test app opens a pool on the primary and one on the replica.
      max_connections: 200,
    },
  })
  const replica = await startPrivateReplica(owner, primary)
  await replica.caughtUp()
  const ready = ((performance.now() - started) / 1000).toFixed(1)
  console.error(`test:replica: primary on port ${primary.port}, streaming replica caught up (${ready} s)`)
  const tap = spawn('npx', ['tap', ...options, ...files], {
    stdio: 'inherit',
    env: {
      ...process.env,
      DATABASE_URL: withDatabase(primary.url, 'postgres'),
      TEST_DATABASE_REPLICA_URL: withDatabase(replica.url, 'postgres'),
    },
  })
  exitCode = await new Promise<number>((resolve) => tap.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))))
} catch (error) {
  console.error(error)
} finally {
  await stop()
}
console.error(`test:replica: ${exitCode === 0 ? 'passed' : 'FAILED'} in ${((performance.now() - started) / 1000).toFixed(0)} s`)
process.exit(exitCode)
