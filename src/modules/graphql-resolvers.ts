/**
 * Resolvers and loaders of every module, merged for Mercurius. Each module's resolvers call the
 * same service functions its REST routes call.
 */
import { articleLoaders, articleResolvers } from './articles/articles.resolvers.ts'
import { orderLoaders, orderResolvers } from './orders/orders.resolvers.ts'
import { productResolvers } from './products/products.resolvers.ts'
import { userLoaders, userResolvers } from './users/users.resolvers.ts'
import type { Resolvers } from '../generated/graphql/types.ts'
import type { Loaders, SchemaResolvers } from '../graphql/resolving/loaders.ts'
import { nodeResolvers } from '../graphql/resolving/node.ts'

/** The modules' maps of type → field → function as one, refusing a field that two modules define. */
function merge<FieldMaps extends Record<string, object | undefined>>(...maps: FieldMaps[]): FieldMaps {
  const merged: Record<string, object> = {}
  for (const map of maps) {
    for (const [type, fields] of Object.entries(map)) {
      for (const field of Object.keys(fields ?? {})) {
        if (merged[type] && Object.hasOwn(merged[type], field)) throw new Error(`${type}.${field} is resolved twice`)
      }
      merged[type] = { ...merged[type], ...fields }
    }
  }
  // Each type holds the union of the maps' fields, each from exactly one map: the maps' own shape.
  return merged as FieldMaps
}

/** The schema's resolvers map, which src/app.ts hands to the GraphQL plugin (as rest-handlers.ts to the router). */
export function graphqlResolvers(): SchemaResolvers {
  return {
    resolvers: merge<Resolvers>(nodeResolvers, orderResolvers, userResolvers, productResolvers, articleResolvers),
    loaders: merge<Loaders>(orderLoaders, userLoaders, articleLoaders),
  }
}
