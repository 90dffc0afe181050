/** GraphQL for the product catalog, over the products service. */
import type { MercuriusContext } from 'mercurius'
import { callerOf, idempotencyClaimOf, namedAsArguments, parseCount, payloadOf } from '../../graphql/arguments.ts'
import type { Product } from '../../contract-types.ts'
import { toConnection, type Connection } from '../../graphql/connection.ts'

export const productResolvers = {
  Query: {
    product: async (_: unknown, args: { sku: string }, ctx: MercuriusContext) =>
      (await ctx.app.services.products.productsBySkus(callerOf(ctx), [args.sku])).get(args.sku) ?? null,
    products: async (_: unknown, args: { first?: number | null; after?: string | null }, ctx: MercuriusContext) => {
      const page = await ctx.app.services.products.list(callerOf(ctx), {
        cursor: args.after ?? undefined,
        limit: parseCount(args.first, 'first'),
      })
      return page.data
    },
    productsConnection: async (
      _: unknown,
      args: { first?: number | null; after?: string | null },
      ctx: MercuriusContext,
    ): Promise<Connection<Product>> =>
      toConnection(
        await ctx.app.services.products.list(callerOf(ctx), { cursor: args.after ?? undefined, limit: parseCount(args.first, 'first') }),
        args.after,
      ),
  },
  Mutation: {
    createProduct: (_: unknown, args: { input: Product; idempotencyKey?: string | null }, ctx: MercuriusContext) =>
      namedAsArguments(
        'input',
        payloadOf(
          ctx.app.services.products.create(callerOf(ctx), args.input, { idempotency: idempotencyClaimOf(ctx, 'createProduct', args) }),
        ),
      ),
  },
  Product: {
    /** The sku: unique in the catalog and never changed, so a normalized cache can key by it. */
    id: (product: Product) => product.sku,
    cursor: (product: Product, _: unknown, ctx: MercuriusContext) => ctx.app.services.products.cursorOf(product),
  },
}
