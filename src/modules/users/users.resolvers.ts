/** GraphQL for users and companies, over the users service. */
import type { Resolvers } from '../../generated/graphql/types.ts'
import type { Loaders } from '../../graphql/loaders.ts'
import { pageOf, parseId } from '../../graphql/arguments.ts'
import { callerOf } from '../../graphql/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/mutations.ts'
import { orNull } from '../../graphql/or-null.ts'
import { toConnection } from '../../graphql/connection.ts'

export const userResolvers: Resolvers = {
  Query: {
    user: (_, args, ctx) => orNull(ctx.app.services.users.get(callerOf(ctx), parseId(args.id, 'id'))),
    me: (_, _args, ctx) => ctx.app.services.users.get(callerOf(ctx), callerOf(ctx).userId),
    users: async (_, args, ctx) => {
      const page = await ctx.app.services.users.list(callerOf(ctx), pageOf(args))
      return page.data.map((user) => ({ ...user, cursor: ctx.app.services.users.cursorOf(user) }))
    },
    usersConnection: async (_, args, ctx) => toConnection(await ctx.app.services.users.list(callerOf(ctx), pageOf(args)), args.after),
  },
  Mutation: {
    createUser: (_, args, ctx) =>
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
    createdAt: (user) => user.created_at,
    cursor: (user, _, ctx) => user.cursor ?? ctx.app.services.users.cursorOf(user),
  },
}

export const userLoaders: Loaders = {
  User: {
    company: async (queries, ctx) => {
      const ids = [...new Set(queries.flatMap((q) => (q.obj.company_id === null ? [] : [q.obj.company_id])))]
      const companies = await ctx.app.services.users.companiesByIds(callerOf(ctx), ids)
      return queries.map(({ obj }) => (obj.company_id === null ? null : (companies.get(obj.company_id) ?? null)))
    },
  },
}
