/**
 * The webhook delivery worker's lifetime (src/modules/webhooks/webhook-worker.ts): started with the
 * app, stopped before the database closes. It wakes on the relay's notifications (a NOTIFY on the
 * events channel: relayed events may be new deliveries), on its own timer (due retries, and the
 * catch-up when a notification was missed), and when one of its deliveries finishes.
 *
 * When connections die: the LISTEN connection reconnects with backoff (src/events/listener.ts) while
 * the timer keeps the worker going; a database outage makes the worker's statements fail, which it
 * logs and retries on the next tick, losing nothing (the deliveries are rows).
 */
import fp from 'fastify-plugin'
import type { AppConfig } from '../config.ts'
import { EVENTS_CHANNEL } from '../db/repositories/outbox.ts'
import { createOutboxListener } from '../events/listener.ts'
import { createEventsService } from '../modules/events/events.service.ts'
import { createWebhookWorker } from '../modules/webhooks/webhook-worker.ts'

const HEARTBEAT_EVERY_MS = 5000

export default fp<{ config: AppConfig['webhooks'] }>(
  async function webhooks(app, options) {
    // Background work, like event delivery: not through app.db's per-request statement log.
    const db = app.database.background
    const worker = createWebhookWorker({
      db,
      events: createEventsService({ db, cursors: app.services.cursors }),
      config: options.config,
      log: app.log,
    })
    let closing = false
    const wake = () => void worker.wake()

    const { url, pglite } = app.database
    const listener = url
      ? createOutboxListener({ url, onOutbox: () => {}, onEvents: wake, onConnected: wake, log: app.log, isClosing: () => closing })
      : undefined
    let stopListening: (() => Promise<void>) | undefined
    if (listener) {
      await listener.connect()
      stopListening = listener.stop
    } else if (pglite) {
      stopListening = await pglite.listen(EVENTS_CHANNEL, wake)
    }

    const timer = setInterval(wake, options.config.pollMs)
    timer.unref()
    const heartbeat = listener ? setInterval(() => void listener.heartbeat(), HEARTBEAT_EVERY_MS) : undefined
    heartbeat?.unref()
    app.addHook('onReady', async () => wake())
    app.addHook('preClose', async () => {
      closing = true
      clearInterval(timer)
      clearInterval(heartbeat)
      await worker.stop()
      // The database may already be gone (a test closes it first); nothing is left to stop then.
      await Promise.resolve()
        .then(stopListening)
        .catch(() => {})
    })
  },
  { name: 'webhooks', dependencies: ['db', 'events'] },
)
