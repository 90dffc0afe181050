/**
 * Stream tickets (decisions §13, "Event streams for browsers"): `EventSource` cannot send
 * `Authorization`, and a long-lived bearer token in a URL ends up in logs and histories. A page
 * exchanges its token for a ticket (`POST /events/stream-tickets`) and opens
 * `GET /events/stream?ticket=…` with it: valid STREAM_TICKET_TTL_SECONDS, usable once, and the
 * stream it opens is the caller's, with the token's scopes and its expiry (the stream ends when the
 * token would have). A reconnect takes a new ticket and resumes with `after` (docs/events.md).
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Caller } from '../../auth/caller.ts'
import type { EventStreamTicket } from '../../contract/contract-types.ts'
import { unauthenticated } from '../../errors.ts'
import type { ServiceDependencies } from '../service-dependencies.ts'
import { insertTicket, takeTicket } from './stream-tickets.repository.ts'

/** Long enough to open the stream right after obtaining it, short enough that a leaked one is stale. */
export const STREAM_TICKET_TTL_SECONDS = 30

const hashOf = (ticket: string) => createHash('sha256').update(ticket).digest('hex')

export function createStreamTicketsService({ db }: Pick<ServiceDependencies, 'db'>) {
  return {
    /** POST /events/stream-tickets: a ticket for this caller, never outliving its token. */
    async issue(caller: Caller): Promise<EventStreamTicket> {
      const ticket = `est_${randomBytes(24).toString('base64url')}`
      const expiresAt = new Date(Math.min(Date.now() + STREAM_TICKET_TTL_SECONDS * 1000, caller.expiresAt))
      await insertTicket(db, {
        ticket_hash: hashOf(ticket),
        subject: caller.subject,
        user_id: caller.userId,
        admin: caller.admin,
        scopes: [...caller.scopes].join(' '),
        token_expires_at: new Date(caller.expiresAt),
        expires_at: expiresAt,
      })
      return { ticket, expires_at: expiresAt.toISOString() }
    },

    /** The caller a ticket was issued to, using the ticket up; 401 for an unknown, used or expired one. */
    async redeem(ticket: string): Promise<Caller> {
      const row = await takeTicket(db, hashOf(ticket))
      if (!row)
        throw unauthenticated('The stream ticket is unknown, used or expired: get a new one (POST /api/v1/events/stream-tickets).', true)
      return {
        subject: row.subject,
        userId: row.user_id,
        admin: row.admin,
        scopes: new Set(row.scopes.split(' ').filter(Boolean)),
        expiresAt: row.token_expires_at.getTime(),
      }
    },
  }
}
