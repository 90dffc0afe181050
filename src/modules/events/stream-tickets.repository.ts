/** All SQL of event stream tickets (migration 0008). */
import { sql } from 'kysely'
import type { Executor } from '../../db/executor.ts'
import type { EventStreamTicketRow } from '../../db/schema.ts'

/** Stores a ticket's hash with its caller, and deletes the expired ones (there are few: they live seconds). */
export async function insertTicket(db: Executor, row: EventStreamTicketRow): Promise<void> {
  await db.deleteFrom('event_stream_tickets').where('expires_at', '<', sql<Date>`now()`).execute()
  await db.insertInto('event_stream_tickets').values(row).execute()
}

/**
 * Uses a ticket up: deletes it and returns its row if it was there and unexpired, in one statement,
 * so that of two instances redeeming it at once exactly one gets it.
 */
export async function takeTicket(db: Executor, ticketHash: string): Promise<EventStreamTicketRow | undefined> {
  const taken = await db.deleteFrom('event_stream_tickets').where('ticket_hash', '=', ticketHash).returningAll().executeTakeFirst()
  return taken && taken.expires_at.getTime() > Date.now() ? taken : undefined
}
