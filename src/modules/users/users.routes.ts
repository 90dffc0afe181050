/** REST handlers for users, by operationId. */
import type { AppConfig } from '../../config.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { answerWrite, baseUrl, caller, sendCollection, sendRecord } from '../../http/rest.ts'
import type { User } from '../../contract-types.ts'
import type { UsersService } from './users.service.ts'

export function userHandlers(users: UsersService, config: AppConfig): OperationHandlers {
  return {
    listUsers: async (request, reply) => {
      const query = request.query as { cursor?: string; limit: number; fields?: string }
      const page = await users.list(caller(request), { cursor: query.cursor, limit: query.limit })
      return sendCollection(request, reply, config.publicUrl, page, query.fields)
    },

    createUser: async (request, reply) => {
      const body = request.body as { name: string; company_id?: number | null }
      const location = (user: User) => `${baseUrl(request, config.publicUrl)}/api/v1/users/${user.id}`
      return answerWrite<User>(request, reply, (idempotency) => users.create(caller(request), body, { idempotency }), {
        status: 201,
        location,
      })
    },

    getUser: async (request, reply) => {
      const { id } = request.params as { id: number }
      const user = await users.get(caller(request), id)
      return sendRecord(reply, user, (request.query as { fields?: string }).fields)
    },
  }
}
