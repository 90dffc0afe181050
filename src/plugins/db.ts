/**
 * The database as a Fastify decoration. The app either receives a database (tests hand it one
 * cloned from a migrated template) or opens one from the configuration, migrates it and loads the
 * demo data on a first start. Whoever opened it closes it.
 */
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import { createDatabase, migrateToLatest, type DatabaseHandle } from '../db/database.ts'
import { seedDemoData } from '../db/seed.ts'
import type { Database } from '../db/schema.ts'

export interface DbPluginOptions {
  database?: DatabaseHandle | undefined
  url: string | undefined
  dataDir: string
  seed: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Kysely<Database>
    database: DatabaseHandle
  }
}

export default fp<DbPluginOptions>(
  async function db(app, options) {
    let database = options.database
    if (!database) {
      const opened = await createDatabase({ url: options.url, dataDir: options.dataDir })
      database = opened
      app.addHook('onClose', () => opened.close())
      await migrateToLatest(opened.db)
      if (options.seed && (await seedDemoData(opened.db))) app.log.info('loaded the demo data set')
    }
    app.decorate('database', database)
    app.decorate('db', database.db)
  },
  { name: 'db' },
)
