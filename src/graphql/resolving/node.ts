/**
 * Global object identification (decisions §13): every Node type's `id` and `databaseId`, and
 * `Query.node`/`Query.nodes`. The one place where a record's `id` is resolved: whatever reads a
 * record (a module's resolver, a plan, a loader) hands over the service record, and these
 * resolvers make its global id from the record's REST key (global-id.ts).
 *
 * `nodes` reads every type's records in one statement per type, through the same service lookups
 * (and so the same authorization) as the type's own root field and loaders: an order needs
 * `orders:read` and is its owner's or an admin's (and so is an order's line item, read through its
 * order), a user record is that user's or an admin's; the others are readable with any valid token. Each id answers what the type's own lookup answers:
 * the record, null when none exists, or that lookup's error (FORBIDDEN) at the id's index.
 */
import type { MercuriusContext } from 'mercurius'
import type { QueryResolvers, Resolvers, ResolversInterfaceTypes, ResolversTypes } from '../../generated/graphql/types.ts'
import { ApiError, badRequest } from '../../errors.ts'
import { callerOf } from './caller.ts'
import { fromGlobalId, type ItemKey, type NodeType, type NumberKeyedNodeType, toGlobalId } from './global-id.ts'

/** The most ids one `nodes` takes, as a page holds at most 100 records. */
export const MAX_NODE_IDS = 100

/** A Node's parent: the service record, tagged with its type (graphql's default type resolver reads `__typename`). */
type NodeParent = ResolversInterfaceTypes<ResolversTypes>['Node']

/** What one type's lookup answers per key: the record, or the error its own lookup raises. */
type Answers<Key> = Map<Key, NodeParent | ApiError>

/** The records of `found`, each tagged with `type`; a key without a record stays absent. */
function tagged<Key, Found extends object, Type extends NodeType>(
  type: Type,
  found: Map<Key, Found | ApiError>,
): Map<Key, (Found & { __typename: Type }) | ApiError> {
  const answers = new Map<Key, (Found & { __typename: Type }) | ApiError>()
  for (const [key, answer] of found) answers.set(key, answer instanceof ApiError ? answer : { ...answer, __typename: type })
  return answers
}

/**
 * Per Node type, the service lookup of many keys in one statement, under the type's own rules:
 * each key's record, or the error the type's own lookup raises for it.
 */
const numberKeyed: { [Type in NumberKeyedNodeType]: (ctx: MercuriusContext, ids: number[]) => Promise<Answers<number>> } = {
  User: async (ctx, ids) => tagged('User', await ctx.app.services.users.getMany(callerOf(ctx), ids)),
  Company: async (ctx, ids) => tagged('Company', await ctx.app.services.users.companiesByIds(callerOf(ctx), ids)),
  Order: async (ctx, ids) => tagged('Order', await ctx.app.services.orders.getMany(callerOf(ctx), ids)),
  Author: async (ctx, ids) => tagged('Author', await ctx.app.services.users.authorsByIds(callerOf(ctx), ids)),
  Article: async (ctx, ids) => tagged('Article', await ctx.app.services.articles.articlesByIds(callerOf(ctx), ids)),
  Comment: async (ctx, ids) => tagged('Comment', await ctx.app.services.articles.commentsByIds(callerOf(ctx), ids)),
}
const productsBySku = async (ctx: MercuriusContext, skus: string[]): Promise<Answers<string>> =>
  tagged('Product', await ctx.app.services.products.productsBySkus(callerOf(ctx), skus))

/**
 * Line items by their global id, each through its order: one statement for the orders, under the
 * order's own rules (an order's error is its items' error); an item past its order's last is none.
 */
async function itemsByIds(ctx: MercuriusContext, items: Map<string, ItemKey>): Promise<Answers<string>> {
  const orders = await ctx.app.services.orders.getMany(callerOf(ctx), [...new Set([...items.values()].map((key) => key.orderId))])
  const answers: Answers<string> = new Map()
  for (const [id, { orderId, position }] of items) {
    const order = orders.get(orderId)
    const item = order instanceof ApiError ? undefined : order?.items[position]
    if (order instanceof ApiError) answers.set(id, order)
    else if (item !== undefined) answers.set(id, { ...item, orderId, position, __typename: 'Item' })
  }
  return answers
}

function invalidGlobalId(argument: string): ApiError {
  const rule = 'must be a global id: the `id` of a Node'
  return badRequest('INVALID_ID', `${argument} ${rule}.`, [{ in: 'body', name: argument, message: rule }])
}

/** The answer to each global id, in order: the record, null (none), or the error for that id. */
async function loadNodes(ctx: MercuriusContext, ids: readonly (string | number)[], argumentOf: (index: number) => string) {
  const named = ids.map((id) => fromGlobalId(String(id)))
  const idsByType = new Map<NumberKeyedNodeType, Set<number>>()
  const skus = new Set<string>()
  const items = new Map<string, ItemKey>()
  for (const [index, key] of named.entries()) {
    if (key?.type === 'Product') skus.add(key.key)
    else if (key?.type === 'Item') items.set(String(ids[index]), key.key)
    else if (key) {
      let keys = idsByType.get(key.type)
      if (!keys) idsByType.set(key.type, (keys = new Set()))
      keys.add(key.key)
    }
  }
  // One statement per type, all at once.
  const [byType, products, itemsById] = await Promise.all([
    Promise.all([...idsByType].map(async ([type, keys]) => [type, await numberKeyed[type](ctx, [...keys])] as const)).then(
      (entries) => new Map(entries),
    ),
    skus.size > 0 ? productsBySku(ctx, [...skus]) : new Map<string, NodeParent | ApiError>(),
    items.size > 0 ? itemsByIds(ctx, items) : new Map<string, NodeParent | ApiError>(),
  ])
  return named.map((key, index) => {
    if (!key) return invalidGlobalId(argumentOf(index))
    if (key.type === 'Product') return products.get(key.key) ?? null
    if (key.type === 'Item') return itemsById.get(String(ids[index])) ?? null
    return byType.get(key.type)?.get(key.key) ?? null
  })
}

/**
 * `nodes`: an Error item of the list is that item's field error (null in `data`, its index in the
 * error's path), as graphql-js and graphql-jit both complete it; a rejected promise item is not
 * (graphql-jit appends its null after the list). The generated resolver types have no place for
 * an Error item, hence the one cast where the resolver is registered.
 */
async function nodes(_: unknown, args: { ids: ReadonlyArray<string | number> }, ctx: MercuriusContext) {
  if (args.ids.length > MAX_NODE_IDS) {
    throw badRequest('TOO_MANY_IDS', `ids has ${args.ids.length} ids; nodes takes at most ${MAX_NODE_IDS}.`, [
      { in: 'body', name: 'ids', message: `at most ${MAX_NODE_IDS} ids` },
    ])
  }
  return loadNodes(ctx, args.ids, (index) => `ids[${index}]`)
}

export const nodeResolvers: Resolvers = {
  Query: {
    node: async (_, args, ctx) => {
      const [answer] = await loadNodes(ctx, [args.id], () => 'id')
      if (answer instanceof Error) throw answer
      return answer ?? null
    },
    nodes: nodes as unknown as NonNullable<QueryResolvers['nodes']>,
  },
  User: { id: (user) => toGlobalId('User', user.id), databaseId: (user) => user.id },
  Company: { id: (company) => toGlobalId('Company', company.id), databaseId: (company) => company.id },
  Order: { id: (order) => toGlobalId('Order', order.id), databaseId: (order) => order.id },
  Product: { id: (product) => toGlobalId('Product', product.sku) },
  Author: { id: (author) => toGlobalId('Author', author.id), databaseId: (author) => author.id },
  Article: { id: (article) => toGlobalId('Article', article.id), databaseId: (article) => article.id },
  Comment: { id: (comment) => toGlobalId('Comment', comment.id), databaseId: (comment) => comment.id },
  Item: { id: (item) => toGlobalId('Item', { orderId: item.orderId, position: item.position }) },
}
