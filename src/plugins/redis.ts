/**
 * The optional shared Redis (REDIS_URL): rate-limit counters, the GraphQL points bucket and
 * subscription fan-out use it so that several instances behave as one service.
 */
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis | undefined
  }
}

export default fp<{ url: string | undefined }>(
  async function redis(app, options) {
    if (!options.url) {
      app.decorate('redis', undefined)
      return
    }
    const client = new Redis(options.url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true })
    client.on('error', (error) => app.log.warn({ err: error }, 'redis connection error'))
    await client.connect()
    app.decorate('redis', client)
    app.addHook('onClose', async () => {
      await client.quit().catch(() => client.disconnect())
    })
  },
  { name: 'redis' },
)
