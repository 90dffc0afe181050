/** REST handlers for users, by operationId. */
import type { AppConfig } from '../../config.ts'
import { sendCollection, sendRecord } from '../../http/envelopes.ts'
import { operationUrl } from '../../http/locations.ts'
import type { OperationHandlers, SparseReadHandler } from '../../http/register-operations.ts'
import { answerWritten, idempotencyClaim } from '../../http/write-answers.ts'
import { requireCaller } from '../../auth/caller.ts'
import type { UsersService } from './users.service.ts'

export function userHandlers(users: UsersService, config: AppConfig): OperationHandlers {
  // Each read once for its two operations: the full one, and its /sparse/ mirror with `fields` (decisions §16).
  const listUsers: SparseReadHandler<'listUsers'> = async (request, reply, fields) => {
    const { cursor, limit } = request.query
    const page = await users.list(requireCaller(request), { cursor, limit })
    return sendCollection(request, reply, config.publicUrl, page, fields)
  }

  const getUser: SparseReadHandler<'getUser'> = async (request, reply, fields) => {
    const user = await users.get(requireCaller(request), request.params.id)
    return sendRecord(reply, user, fields)
  }

  return {
    listUsers: (request, reply) => listUsers(request, reply, undefined),
    listUsersSparse: (request, reply) => listUsers(request, reply, request.query.fields),

    createUser: async (request, reply) => {
      const idempotency = idempotencyClaim(request)
      const written = await users.create(requireCaller(request), request.body, { idempotency })
      return answerWritten(reply, written, {
        location: (user) => operationUrl(request, config.publicUrl, 'getUser', { id: user.id }),
      })
    },

    getUser: (request, reply) => getUser(request, reply, undefined),
    getUserSparse: (request, reply) => getUser(request, reply, request.query.fields),
  }
}
