/**
 * The webhook delivery worker's lifetime (src/modules/webhooks/webhook-worker.ts): started with the
 * app, stopped before the database closes. It wakes on the relay's notifications (a NOTIFY on the
 * events channel: relayed events may be new deliveries), on its own timer (due retries, and the
 * catch-up when a notification was missed), and when one of its deliveries finishes.
 *
 * It is woken through the events plugin's feed (app.eventFeed), which every relayed event reaches
 * on every instance, by LISTEN or by the poll (src/events/plugin.ts): no connection of its own,
 * so it follows EVENTS_DATABASE_URL and the pooled mode like the rest of event delivery.
 *
 * When connections die: the events plugin's listener reconnects (or its poll delivers) while the
 * timer keeps the worker going; a database outage makes the worker's statements fail, which it
 * logs and retries on the next tick, losing nothing (the deliveries are rows).
 */
import fp from 'fastify-plugin'
import type { AppConfig } from '../../config.ts'
import { createEventsService } from '../../events/events.service.ts'
import { createWebhookWorker } from './webhook-worker.ts'
import { untracedBackground } from '../../events/background.ts'

export default fp<{ config: AppConfig['webhooks'] }>(
  async function webhooks(app, options) {
    // Background work, like event delivery: not through app.db's per-request statement log.
    const db = app.database.background
    const worker = createWebhookWorker({
      db,
      events: createEventsService({ db, cursors: app.services.cursors }),
      config: options.config,
      log: app.log,
      background: app.tracing?.background ?? untracedBackground,
    })
    const wake = () => void worker.wake()

    const stopWaking = app.eventFeed.subscribe(wake)

    const timer = setInterval(wake, options.config.pollMs)
    timer.unref()
    app.addHook('onReady', async () => wake())
    app.addHook('preClose', async () => {
      clearInterval(timer)
      stopWaking()
      await worker.stop()
    })
  },
  { name: 'webhooks', dependencies: ['db', 'events'] },
)
