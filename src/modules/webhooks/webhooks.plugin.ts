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
import { pruneInBatches } from '../../db/prune-in-batches.ts'
import { pruneDeliveries } from './webhooks.repository.ts'

/** How often an instance prunes deliveries past their retention. */
const PRUNE_EVERY_MS = 60_000

export default fp<{ config: AppConfig['webhooks'] }>(
  async function webhooks(app, options) {
    // Background work, like event delivery: not through app.db's per-request statement log.
    const db = app.database.background
    const background = app.tracing?.background ?? untracedBackground
    const worker = createWebhookWorker({
      db,
      events: createEventsService({ db, cursors: app.services.cursors }),
      config: options.config,
      log: app.log,
      background,
    })
    const wake = () => void worker.wake()

    const stopWaking = app.eventFeed.subscribe(wake)

    const timer = setInterval(wake, options.config.pollMs)
    timer.unref()

    // Deliveries past WEBHOOK_DELIVERY_RETENTION go, a batch at a time (decisions §17), once a
    // minute on every instance: a batch skips the rows another instance is deleting.
    let closing = false
    let pruning: Promise<void> | undefined
    const prune = () =>
      background('webhooks.housekeeping', async () => {
        try {
          const deleted = await pruneInBatches(
            (limit) => pruneDeliveries(db, options.config.deliveryRetentionMs, limit),
            () => closing,
          )
          return deleted > 0 ? { attributes: { 'webhooks.deliveries_deleted': deleted } } : undefined
        } catch (error) {
          if (closing) return undefined
          app.log.warn({ err: error }, 'pruning webhook deliveries failed; retrying on a later tick')
          return { error }
        }
      })
    const pruneTimer = setInterval(() => {
      pruning ??= prune().finally(() => {
        pruning = undefined
      })
    }, PRUNE_EVERY_MS)
    pruneTimer.unref()

    app.addHook('onReady', async () => wake())
    app.addHook('preClose', async () => {
      closing = true
      clearInterval(timer)
      clearInterval(pruneTimer)
      stopWaking()
      await pruning
      await worker.stop()
    })
  },
  { name: 'webhooks', dependencies: ['db', 'events'] },
)
