/** GraphQL for users and companies, over the users service. */
import type { Resolvers } from '../../generated/graphql/types.ts'
import type { Loaders } from '../../graphql/loaders.ts'
import { pageOf, parseId } from '../../graphql/arguments.ts'
import { callerOf } from '../../graphql/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/mutations.ts'
import { orNull } from '../../graphql/or-null.ts'
import { toConnection } from '../../graphql/connection.ts'
import { type SelectedFields, selectedFields, selectedFieldsAt } from '../../graphql/selects-field.ts'
import type { UserRelations } from './users.repository.ts'

/** What the User fields selected (`fields`) need read with each user, in its own statement: its company. */
export function userRelationsOf(fields: SelectedFields): UserRelations {
  return { company: fields.has('company') }
}

export const userResolvers: Resolvers = {
  Query: {
    user: (_, args, ctx, info) =>
      orNull(ctx.app.services.users.get(callerOf(ctx), parseId(args.id, 'id', 'User'), userRelationsOf(selectedFields(info)))),
    me: (_, _args, ctx, info) => ctx.app.services.users.get(callerOf(ctx), callerOf(ctx).userId, userRelationsOf(selectedFields(info))),
    // No total: the GraphQL lists show none.
    users: async (_, args, ctx, info) => {
      const page = await ctx.app.services.users.list(callerOf(ctx), pageOf(args), {
        total: false,
        relations: userRelationsOf(selectedFields(info)),
      })
      return page.data.map((user) => ({ ...user, cursor: ctx.app.services.users.cursorOf(user) }))
    },
    usersConnection: async (_, args, ctx, info) =>
      toConnection(
        await ctx.app.services.users.list(callerOf(ctx), pageOf(args), {
          total: false,
          relations: userRelationsOf(selectedFieldsAt(info, ['edges', 'node'])),
        }),
        args.after,
      ),
  },
  Mutation: {
    createUser: (_, args, ctx) =>
      namedAsArguments(
        'input',
        payloadOf(
          ctx.app.services.users.create(
            callerOf(ctx),
            {
              name: args.input.name,
              company_id: args.input.companyId == null ? null : parseId(args.input.companyId, 'input.companyId', 'Company'),
            },
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
    company: {
      loader: async (queries, ctx) => {
        const ids = [...new Set(queries.flatMap((q) => (q.obj.company_id === null ? [] : [q.obj.company_id])))]
        const companies = await ctx.app.services.users.companiesByIds(callerOf(ctx), ids)
        return queries.map(({ obj }) => (obj.company_id === null ? null : (companies.get(obj.company_id) ?? null)))
      },
      // Read with the user by its plan (the user's own statement, or its order's).
      preloaded: (user) => user.related?.company,
    },
  },
}
