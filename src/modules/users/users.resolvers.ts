/** GraphQL for users and companies, over the users service. */
import type { MercuriusContext } from 'mercurius'
import { callerOf, idempotencyClaimOf, namedAsArguments, orNull, parseCount, parseId, payloadOf } from '../../graphql/arguments.ts'
import type { User } from '../../contract-types.ts'
import { toConnection, type Connection } from '../../graphql/connection.ts'

type UserWithCursor = User & { cursor?: string }

export const userResolvers = {
  Query: {
    user: (_: unknown, args: { id: string }, ctx: MercuriusContext) =>
      orNull(ctx.app.services.users.get(callerOf(ctx), parseId(args.id, 'id'))),
    me: (_: unknown, _args: unknown, ctx: MercuriusContext) => ctx.app.services.users.get(callerOf(ctx), callerOf(ctx).userId),
    users: async (_: unknown, args: { first?: number | null; after?: string | null }, ctx: MercuriusContext): Promise<UserWithCursor[]> => {
      const page = await ctx.app.services.users.list(callerOf(ctx), {
        cursor: args.after ?? undefined,
        limit: parseCount(args.first, 'first'),
      })
      return page.data.map((user) => ({ ...user, cursor: ctx.app.services.users.cursorOf(user) }))
    },
    usersConnection: async (
      _: unknown,
      args: { first?: number | null; after?: string | null },
      ctx: MercuriusContext,
    ): Promise<Connection<User>> =>
      toConnection(
        await ctx.app.services.users.list(callerOf(ctx), { cursor: args.after ?? undefined, limit: parseCount(args.first, 'first') }),
        args.after,
      ),
  },
  Mutation: {
    createUser: (
      _: unknown,
      args: { input: { name: string; companyId?: string | null }; idempotencyKey?: string | null },
      ctx: MercuriusContext,
    ) =>
      namedAsArguments(
        'input',
        payloadOf(
          ctx.app.services.users.create(
            callerOf(ctx),
            { name: args.input.name, company_id: args.input.companyId == null ? null : parseId(args.input.companyId, 'input.companyId') },
            { idempotency: idempotencyClaimOf(ctx, 'createUser', args) },
          ),
        ),
      ),
  },
  User: {
    createdAt: (user: User) => user.created_at,
    cursor: (user: UserWithCursor, _: unknown, ctx: MercuriusContext) => user.cursor ?? ctx.app.services.users.cursorOf(user),
  },
}

export const userLoaders = {
  User: {
    company: async (queries: Array<{ obj: User }>, ctx: MercuriusContext) => {
      const ids = [...new Set(queries.flatMap((q) => (q.obj.company_id === null ? [] : [q.obj.company_id])))]
      const companies = await ctx.app.services.users.companiesByIds(ids)
      return queries.map(({ obj }) => (obj.company_id === null ? null : (companies.get(obj.company_id) ?? null)))
    },
  },
}
