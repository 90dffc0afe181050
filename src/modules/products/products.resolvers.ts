/** GraphQL for the product catalog, over the products service. */
import type { Resolvers } from '../../generated/graphql/types.ts'
import { pageOf } from '../../graphql/resolving/arguments.ts'
import { callerOf } from '../../graphql/resolving/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/resolving/mutations.ts'
import { toConnection } from '../../graphql/resolving/connection.ts'

export const productResolvers: Resolvers = {
  Query: {
    product: async (_, args, ctx) => (await ctx.app.services.products.productsBySkus(callerOf(ctx), [args.sku])).get(args.sku) ?? null,
    products: async (_, args, ctx) => {
      const page = await ctx.app.services.products.list(callerOf(ctx), pageOf(args))
      return page.data
    },
    productsConnection: async (_, args, ctx) => toConnection(await ctx.app.services.products.list(callerOf(ctx), pageOf(args)), args.after),
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
