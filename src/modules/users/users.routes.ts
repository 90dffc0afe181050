/** REST handlers for users, by operationId. */
import type { AppConfig } from '../../config.ts'
import { sendCollection, sendRecord } from '../../http/envelopes.ts'
import { operationUrl } from '../../http/locations.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { answerWritten, idempotencyClaim } from '../../http/write-answers.ts'
import { requireCaller } from '../../auth/caller.ts'
import type { UsersService } from './users.service.ts'

export function userHandlers(users: UsersService, config: AppConfig): OperationHandlers {
  return {
    listUsers: async (request, reply) => {
      const { cursor, limit, fields } = request.query
      const page = await users.list(requireCaller(request), { cursor, limit })
      return sendCollection(request, reply, config.publicUrl, page, fields)
    },

    createUser: async (request, reply) => {
      const idempotency = idempotencyClaim(request)
      const written = await users.create(requireCaller(request), request.body, { idempotency })
      return answerWritten(reply, written, {
        location: (user) => operationUrl(request, config.publicUrl, 'getUser', { id: user.id }),
      })
    },

    getUser: async (request, reply) => {
      const user = await users.get(requireCaller(request), request.params.id)
      return sendRecord(reply, user, request.query.fields)
    },
  }
}
