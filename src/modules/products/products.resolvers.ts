/** GraphQL for the product catalog, over the products service. */
import type { Resolvers } from '../../generated/graphql/types.ts'
import { pageOf } from '../../graphql/resolving/arguments.ts'
import { callerOf } from '../../graphql/resolving/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/resolving/mutations.ts'
import { selectsTotalCount, toConnection } from '../../graphql/resolving/connection.ts'

export const productResolvers: Resolvers = {
  Query: {
    product: async (_, args, ctx) => (await ctx.app.services.products.productsBySkus(callerOf(ctx), [args.sku])).get(args.sku) ?? null,
    // No total: the lists show none, and a connection reads one only when totalCount is selected.
    products: async (_, args, ctx) => {
      const page = await ctx.app.services.products.list(callerOf(ctx), pageOf(args), { total: false })
      return page.data
    },
    productsConnection: async (_, args, ctx, info) => {
      const total = selectsTotalCount(info)
      const page = await ctx.app.services.products.list(callerOf(ctx), pageOf(args), { total })
      return toConnection(page, args.after, { total })
    },
  },
  Mutation: {
    createProduct: (_, args, ctx) =>
      namedAsArguments(
        'input',
        payloadOf(
          ctx.app.services.products.create(callerOf(ctx), args.input, { idempotency: idempotencyClaimOf(ctx, 'createProduct', args) }),
        ),
      ),
  },
  Product: {
    cursor: (product, _, ctx) => ctx.app.services.products.cursorOf(product),
  },
}
