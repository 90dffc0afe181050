/** GraphQL for users and companies, over the users service. */
import type { Resolvers } from '../../generated/graphql/types.ts'
import type { Loaders } from '../../graphql/resolving/loaders.ts'
import { pageOf, parseId } from '../../graphql/resolving/arguments.ts'
import { callerOf } from '../../graphql/resolving/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/resolving/mutations.ts'
import { orNull } from '../../graphql/resolving/or-null.ts'
import { selectsTotalCount, toConnection } from '../../graphql/resolving/connection.ts'
import { selectedFields, selectedFieldsAt } from '../../graphql/resolving/selects-field.ts'
import type { GraphQLResolveInfo } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import { userOrdersReadWithUser } from '../orders/orders.plan.ts'
import { userRelationsOf } from './users.plan.ts'

/**
 * Query.user and Query.me: the user with the relations selected, and with its recent orders when
 * the orders plan says the user's statement can read them too (orders.plan.ts); User.orders then
 * answers from those.
 */
function readUser(ctx: MercuriusContext, info: GraphQLResolveInfo, id: number) {
  const fields = selectedFields(info)
  const relations = userRelationsOf(fields)
  const last = userOrdersReadWithUser(fields, info)
  return last === undefined
    ? ctx.app.services.users.get(callerOf(ctx), id, relations)
    : ctx.app.services.orders.getUserWithRecentOrders(callerOf(ctx), id, relations, last)
}

export const userResolvers: Resolvers = {
  Query: {
    user: (_, args, ctx, info) => orNull(readUser(ctx, info, parseId(args.id, 'id', 'User'))),
    me: (_, _args, ctx, info) => readUser(ctx, info, callerOf(ctx).userId),
    // No total: the GraphQL lists show none.
    users: async (_, args, ctx, info) => {
      const page = await ctx.app.services.users.list(callerOf(ctx), pageOf(args), {
        total: false,
        relations: userRelationsOf(selectedFields(info)),
      })
      return page.data.map((user) => ({ ...user, cursor: ctx.app.services.users.cursorOf(user) }))
    },
    usersConnection: async (_, args, ctx, info) => {
      const total = selectsTotalCount(info)
      const page = await ctx.app.services.users.list(callerOf(ctx), pageOf(args), {
        total,
        relations: userRelationsOf(selectedFieldsAt(info, ['edges', 'node'])),
      })
      return toConnection(page, args.after, { total })
    },
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
