/**
 * The transactional outbox (decisions §11): an event is written in the same transaction as the
 * change it reports, so a rolled-back change emits nothing and a committed one is never lost.
 */
import type { Executor } from '../transaction.ts'

export type EventTopic = 'order.created' | 'order.status_changed' | 'article.created' | 'comment.added'

export async function recordEvent(trx: Executor, topic: EventTopic, payload: Record<string, unknown>): Promise<void> {
  await trx.insertInto('outbox').values({ topic, payload: JSON.stringify(payload) }).execute()
}
