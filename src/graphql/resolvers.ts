/**
 * Resolvers and loaders of every module, merged for Mercurius. Each module's resolvers call the
 * same service functions its REST routes call.
 */
import { articleLoaders, articleResolvers } from '../modules/articles/articles.resolvers.ts'
import { orderLoaders, orderResolvers } from '../modules/orders/orders.resolvers.ts'
import { productResolvers } from '../modules/products/products.resolvers.ts'
import { userLoaders, userResolvers } from '../modules/users/users.resolvers.ts'
import type { Resolvers } from '../generated/graphql/types.ts'
import type { Loaders } from './loaders.ts'
import { nodeResolvers } from './node.ts'

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

/**
 * The generated resolver map less what Mercurius' resolver maps have no place for: the Node
 * interface's `__resolveType` (graphql's default type resolver reads the `__typename` tag node.ts
 * puts on what node/nodes return) and its types' `__isTypeOf`. None of them is ever set.
 */
type ObjectResolvers = { [Type in Exclude<keyof Resolvers, 'Node'>]?: Omit<NonNullable<Resolvers[Type]>, '__isTypeOf'> }

export function graphqlResolvers(): { resolvers: ObjectResolvers; loaders: Loaders } {
  return {
    resolvers: merge<Resolvers>(nodeResolvers, orderResolvers, userResolvers, productResolvers, articleResolvers),
    loaders: merge<Loaders>(orderLoaders, userLoaders, articleLoaders),
  }
}
