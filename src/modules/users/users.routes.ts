/** REST handlers for users, by operationId. */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../../config.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { baseUrl, caller, idempotentPost, sendCollection, sendRecord } from '../../http/rest.ts'
import type { UsersService } from './users.service.ts'

export function userHandlers(app: FastifyInstance, users: UsersService, config: AppConfig): OperationHandlers {
  return {
    listUsers: async (request, reply) => {
      const query = request.query as { cursor?: string; limit: number; fields?: string }
      const page = await users.list(caller(request), { cursor: query.cursor, limit: query.limit })
      return sendCollection(request, reply, config.publicUrl, page, query.fields)
    },

    createUser: async (request, reply) => {
      const body = request.body as { name: string; company_id?: number | null }
      return idempotentPost(request, reply, app.db, async (executor) => {
        const user = await users.create(caller(request), body, executor)
        return { status: 201, body: user, location: `${baseUrl(request, config.publicUrl)}/api/v1/users/${user.id}` }
      })
    },

    getUser: async (request, reply) => {
      const { id } = request.params as { id: number }
      const user = await users.get(caller(request), id)
      return sendRecord(reply, user, (request.query as { fields?: string }).fields)
    },
  }
}
