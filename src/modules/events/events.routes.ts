/** REST handlers for the event log, by operationId. */
import type { FastifyInstance } from 'fastify'
import { sendNestedCollection } from '../../http/envelopes.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { requireCaller } from '../../auth/caller.ts'
import { parseEventId, parseEventTypes } from '../../events/events.service.ts'

export function eventHandlers(app: FastifyInstance): OperationHandlers {
  return {
    listEvents: async (request, reply) => {
      const { after, types, cursor, limit } = request.query
      const page = await app.services.events.list(requireCaller(request), { after, types, cursor, limit })
      return sendNestedCollection(reply, page, undefined)
    },

    createEventStreamTicket: async (request, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await app.services.streamTickets.issue(requireCaller(request))),

    streamEvents: async (request, reply) => {
      // A page's EventSource sends a ticket instead of Authorization (stream-tickets.service.ts).
      const { ticket } = request.query
      const caller = request.caller ?? (ticket === undefined ? requireCaller(request) : await app.services.streamTickets.redeem(ticket))
      // EventSource sends Last-Event-ID when it reconnects: it wins over the URL's `after`, which
      // is the position the stream was first opened at.
      const lastEventId = request.headers['last-event-id']
      const after =
        lastEventId !== undefined
          ? parseEventId(lastEventId, 'header', 'Last-Event-ID')
          : request.query.after === undefined
            ? undefined
            : parseEventId(request.query.after, 'query', 'after')
      const types = parseEventTypes(request.query.types, 'query', 'types')
      await app.eventStreams.open(reply, { caller, after, types })
      return reply
    },
  }
}
