/**
 * The database as a Fastify decoration. The app either receives a database (tests hand it one
 * cloned from a migrated template) or opens one from the configuration, migrates it and loads the
 * demo data on a first start. Whoever opened it closes it.
 *
 * A lost connection never ends the process: createDatabase gives every pooled client an error
 * listener, the request that was using it answers 503 DATABASE_UNAVAILABLE, and the pool opens a
 * new connection for the next one (decisions §12).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import type { StatementTarget } from '../db/compiled-statement.ts'
import { createDatabase, migrateToLatest, type DatabaseHandle } from '../db/database.ts'
import { seedDemoData } from '../db/seed.ts'
import { ReadRoutingDriver, type ReadScope } from '../db/read-routing.ts'
import { createReplicaSet, type ReplicaSet } from '../db/replicas.ts'
import { readYourWrites } from './read-your-writes.ts'
import type { Database } from '../db/schema.ts'

export interface DbPluginOptions {
  database?: DatabaseHandle | undefined
  url: string | undefined
  dataDir: string
  seed: boolean
  /** DB_STATEMENT_TIMEOUT, for a database this plugin opens. */
  statementTimeoutMs: number
  /** DB_POOLED: behind a pooler in transaction mode; undefined to find out. */
  pooled: boolean | undefined
  /** DATABASE_REPLICA_URLS and DATABASE_REPLICA_MAX_LAG (decisions §15): none, an empty list. */
  replicas: { urls: string[]; maxLagMs: number }
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Kysely<Database>
    /** `db` and its short path for a fixed statement, where it has one (compiled-statement.ts). */
    statements: StatementTarget
    database: DatabaseHandle
    /** The replicas reads may go to; undefined without DATABASE_REPLICA_URLS. */
    replicas: ReplicaSet | undefined
  }
}

export default fp<DbPluginOptions>(
  async function db(app, options) {
    let database = options.database
    if (!database) {
      const opened = await createDatabase({
        url: options.url,
        dataDir: options.dataDir,
        statementTimeoutMs: options.statementTimeoutMs,
        pooled: options.pooled,
        logger: app.log,
      })
      database = opened
      app.addHook('onClose', () => opened.close())
      // A migration may rightly outlast a request's statement timeout (a long ALTER, or waiting
      // for another instance's migration lock), so on PostgreSQL it runs on a connection without one.
      const setup =
        opened.kind === 'postgres'
          ? await createDatabase({ url: options.url, poolSize: 1, statementTimeoutMs: 0, logger: app.log })
          : opened
      try {
        await migrateToLatest(setup.db)
        if (options.seed && (await seedDemoData(setup.db))) app.log.info('loaded the demo data set')
      } finally {
        if (setup !== opened) await setup.close()
      }
    }
    app.decorate('database', database)
    const { urls, maxLagMs } = options.replicas
    if (urls.length === 0) {
      // No replicas: app.db is the primary's own Kysely, and a read pays nothing for routing.
      app.decorate('db', database.db)
      app.decorate('statements', { db: database.db, run: database.runStatement })
      app.decorate('replicas', undefined)
      return
    }
    if (!database.drivers) throw new Error('DATABASE_REPLICA_URLS needs PostgreSQL: PGlite has no replicas (unset it, or set DATABASE_URL)')
    const replicas = await createReplicaSet({
      urls,
      maxLagMs,
      primary: database.background,
      statementTimeoutMs: options.statementTimeoutMs,
      pooled: database.pooled,
      logger: app.log,
    })
    app.addHook('onClose', () => replicas.close())
    const scopes = new AsyncLocalStorage<ReadScope>()
    const routed = database.drivers.through(new ReadRoutingDriver(database.drivers.driver(), replicas, scopes))
    app.decorate('db', routed)
    // Every statement of a routed database goes through the routing driver, fixed ones too.
    app.decorate('statements', { db: routed, run: undefined })
    app.decorate('replicas', replicas)
    readYourWrites(app, replicas, scopes, maxLagMs)
  },
  { name: 'db', dependencies: ['redis', 'auth'] },
)
