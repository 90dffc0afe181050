/** All SQL of the event log's readers (the outbox itself is src/db/repositories/outbox.ts). */
import type { EventTopic } from '../../db/repositories/outbox.ts'
import { type DeliverableEvent, toDeliverableEvent } from '../../db/repositories/outbox.ts'
import type { Executor } from '../../db/executor.ts'
import { type EventAudience, visibleWhere } from './event-visibility.ts'

/** The events `audience` may see after seq `after`, oldest first, of `types` (all when undefined): one statement on outbox_seq_idx. */
export async function visibleEventsAfter(
  db: Executor,
  audience: EventAudience,
  query: { after: number; types: readonly EventTopic[] | undefined; limit: number },
): Promise<DeliverableEvent[]> {
  const { after, types, limit } = query
  let select = db
    .selectFrom('outbox')
    .select(['seq', 'topic', 'payload', 'owner_id', 'created_at'])
    .where('seq', '>', after)
    .where(visibleWhere(audience))
  if (types) select = select.where('topic', 'in', types)
  const rows = await select.orderBy('seq').limit(limit).execute()
  return rows.map(toDeliverableEvent)
}
