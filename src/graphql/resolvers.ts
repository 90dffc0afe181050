/**
 * Resolvers and loaders of every module, merged for Mercurius. Each module's resolvers call the
 * same service functions its REST routes call.
 */
import { articleLoaders, articleResolvers } from '../modules/articles/articles.resolvers.ts'
import { orderLoaders, orderResolvers } from '../modules/orders/orders.resolvers.ts'
import { productResolvers } from '../modules/products/products.resolvers.ts'
import { userLoaders, userResolvers } from '../modules/users/users.resolvers.ts'

type FieldMap = Record<string, Record<string, unknown>>

function merge(...maps: FieldMap[]): FieldMap {
  const merged: FieldMap = {}
  for (const map of maps) {
    for (const [type, fields] of Object.entries(map)) {
      for (const field of Object.keys(fields)) {
        if (merged[type]?.[field] !== undefined) throw new Error(`${type}.${field} is resolved twice`)
      }
      merged[type] = { ...merged[type], ...fields }
    }
  }
  return merged
}

export function graphqlResolvers(): { resolvers: FieldMap; loaders: FieldMap } {
  return {
    resolvers: merge(orderResolvers, userResolvers, productResolvers, articleResolvers),
    loaders: merge(orderLoaders, userLoaders, articleLoaders),
  }
}
