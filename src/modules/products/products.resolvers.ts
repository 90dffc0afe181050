/** GraphQL for the product catalog, over the products service. */
import type { Resolvers } from '../../generated/graphql/types.ts'
import { pageOf } from '../../graphql/resolving/arguments.ts'
import { callerOf } from '../../graphql/resolving/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/resolving/mutations.ts'
import { toConnection, totalCountOf } from '../../graphql/resolving/connection.ts'

export const productResolvers: Resolvers = {
  Query: {
    product: async (_, args, ctx) => (await ctx.app.services.products.productsBySkus(callerOf(ctx), [args.sku])).get(args.sku) ?? null,
    // No total: the lists show none, and a connection counts only when totalCount is selected.
    products: async (_, args, ctx) => {
      const page = await ctx.app.services.products.list(callerOf(ctx), pageOf(args), { total: false })
      return page.data
    },
    productsConnection: async (_, args, ctx) => {
      const caller = callerOf(ctx)
      const page = await ctx.app.services.products.list(caller, pageOf(args), { total: false })
      return toConnection(page, args.after, () => ctx.app.services.products.count(caller))
    },
  },
  ProductConnection: { totalCount: totalCountOf },
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
