/** Entry point: read the configuration, build the app, listen, and shut down gracefully. */
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { type AppConfig, ConfigError, loadConfig, loadEnvFile } from './config.ts'
import { databaseWorkBoundMs } from './db/database.ts'
import { startBanner } from './start-banner.ts'

let config: AppConfig
try {
  loadEnvFile()
  config = loadConfig()
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message)
    process.exit(1)
  }
  throw error
}

/**
 * How long a shutdown may take before the process is killed: 10 s, or more when a request's
 * database work may take longer (a long DB_STATEMENT_TIMEOUT), so that work in flight ends by
 * itself (its deadline, then closing the connections: databaseWorkBoundMs and CLOSE_WAIT_MS).
 */
const SHUTDOWN_GRACE_MS = 10_000
const CLOSING_MARGIN_MS = 4000

/**
 * A start that fails on a dependency (the database or its pooler refusing us, Redis unreachable)
 * ends with one line naming the cause and exit code 1, not a stack trace: the cause is in the
 * operator's configuration, not in this code. Anything else is a bug and keeps its stack.
 */
function exitOnStartupFailure(error: unknown): never {
  let code: string | undefined
  for (let cause: unknown = error; cause instanceof Error && code === undefined; cause = cause.cause)
    if ('code' in cause && cause.code !== undefined) code = String(cause.code)
  if (error instanceof Error && code !== undefined) {
    console.error(`cannot start: ${error.message} (${code})`)
    process.exit(1)
  }
  throw error
}

const app = await buildApp({ config }).catch(exitOnStartupFailure)
const grace =
  config.shutdownDrainMs + Math.max(SHUTDOWN_GRACE_MS, databaseWorkBoundMs(config.databaseStatementTimeoutMs) + CLOSING_MARGIN_MS)
closeWithGrace({ delay: grace }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error')
  else {
    app.log.info({ signal, drainMs: config.shutdownDrainMs }, 'shutting down')
    // Behind a load balancer: out of its rotation first (plugins/shutdown.ts), then closed.
    app.startDraining()
    await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs))
  }
  await app.close()
})
const address = await app.listen({ host: config.host, port: config.port }).catch(exitOnStartupFailure)
process.stderr.write(startBanner(config, address))
