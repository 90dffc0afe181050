/** Entry point: read the configuration, build the app, listen, and shut down gracefully. */
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { type AppConfig, ConfigError, loadConfig, loadEnvFile } from './config.ts'
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

const app = await buildApp({ config })
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})
const address = await app.listen({ host: config.host, port: config.port })
process.stderr.write(startBanner(config, address))
