/**
 * The cost model of decisions §9, computed before execution on the operation that will execute
 * (executing-operation.ts): a scalar or enum field costs 0; an object field costs 1 plus its
 * selection; a list field multiplies that by its `first`/`last` argument, or by the default page
 * size (DEFAULT_PAGE_SIZE, 20) where it has none. Arguments are read as graphql-js will pass them to the resolver:
 * from literals or coerced variables, declared variable defaults included. A selection that
 * `@skip`/`@include` leave out costs nothing. Introspection (`__schema`, `__type`, `__typename`)
 * is free, so tools that introspect are never refused.
 *
 * A connection (`ordersConnection(first: 10) { edges { cursor node { … } } pageInfo { … } }`) costs
 * exactly what the list it mirrors costs (`orders(first: 10) { … }`): its `first` × (1 + the node's
 * selection). The connection, its edges and `pageInfo` are bookkeeping around the records and add
 * nothing themselves; `edges` is multiplied by the page size of the connection it belongs to.
 */
import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  GraphQLList,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql'
import { DEFAULT_PAGE_SIZE } from '../pagination/page-size.ts'
import { isIncluded, type ExecutingOperation } from './executing-operation.ts'

/** A list without `first`/`last` returns a page of the default size, so it costs that many. */
export const DEFAULT_LIST_SIZE = DEFAULT_PAGE_SIZE

function listSize(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: ExecutingOperation['variables']): number {
  let args: Record<string, unknown>
  try {
    args = getArgumentValues(field, node, variables)
  } catch {
    // An argument that does not coerce fails its field when it executes: nothing is fetched for it.
    return DEFAULT_LIST_SIZE
  }
  for (const name of ['first', 'last']) {
    const value = args[name]
    // A negative or absurd size is refused by the resolver; the cost uses what was asked.
    if (typeof value === 'number' && value > 0) return value
  }
  return DEFAULT_LIST_SIZE
}

/** A Relay connection type: `…Connection` with `edges` (a list of edges) and `pageInfo`. */
function isConnectionType(type: GraphQLCompositeType): type is GraphQLObjectType {
  if (!isObjectType(type) || !type.name.endsWith('Connection')) return false
  const fields = type.getFields()
  return fields.edges !== undefined && getNullableType(fields.edges.type) instanceof GraphQLList && fields.pageInfo !== undefined
}

interface CostWalk {
  schema: GraphQLSchema
  operation: ExecutingOperation
  /**
   * Each fragment is priced once per request, however often it is spread: without this, a short
   * document spreading fragments into fragments costs exponential time just to price.
   */
  fragmentCosts: Map<string, number>
}

/**
 * `pageSize` is set while walking a connection's own selection (directly or through fragments
 * on the connection type): the `first` of that connection field, which its `edges` multiply by.
 */
function fieldCost(selection: FieldNode, parent: GraphQLCompositeType, walk: CostWalk, pageSize: number | undefined): number {
  if (selection.name.value.startsWith('__')) return 0
  if (!isObjectType(parent) && !isInterfaceType(parent)) return 0
  const field = parent.getFields()[selection.name.value]
  if (!field) return 0
  const named = getNamedType(field.type)
  if (!isCompositeType(named)) return 0
  if (isConnectionType(parent)) {
    if (selection.name.value === 'edges')
      return (pageSize ?? DEFAULT_LIST_SIZE) * selectionCost(selection.selectionSet, named, walk, undefined)
    if (selection.name.value === 'pageInfo') return 0
  }
  if (isConnectionType(named))
    return selectionCost(selection.selectionSet, named, walk, listSize(field, selection, walk.operation.variables))
  const single = 1 + selectionCost(selection.selectionSet, named, walk, undefined)
  return getNullableType(field.type) instanceof GraphQLList ? single * listSize(field, selection, walk.operation.variables) : single
}

function selectionCost(
  selectionSet: SelectionSetNode | undefined,
  parent: GraphQLCompositeType,
  walk: CostWalk,
  pageSize: number | undefined,
): number {
  if (!selectionSet) return 0
  let total = 0
  for (const selection of selectionSet.selections) {
    if (!isIncluded(selection, walk.operation.variables)) continue
    if (selection.kind === Kind.FIELD) {
      total += fieldCost(selection, parent, walk, pageSize)
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent
      total += selectionCost(selection.selectionSet, isCompositeType(type) ? type : parent, walk, pageSize)
    } else {
      total += fragmentCost(selection.name.value, parent, walk, pageSize)
    }
  }
  return total
}

function fragmentCost(name: string, parent: GraphQLCompositeType, walk: CostWalk, pageSize: number | undefined): number {
  // A fragment on a connection costs per page size: the same fragment under `first: 2` and
  // `first: 50` is priced once for each.
  const key = pageSize === undefined ? name : `${name}@${pageSize}`
  const known = walk.fragmentCosts.get(key)
  if (known !== undefined) return known
  const fragment = walk.operation.fragments[name]
  if (!fragment) return 0
  // A fragment cycle is refused by graphql's validation before this runs; were one here, it adds nothing.
  walk.fragmentCosts.set(key, 0)
  const type = walk.schema.getType(fragment.typeCondition.name.value)
  const cost = selectionCost(fragment.selectionSet, isCompositeType(type) ? type : parent, walk, pageSize)
  walk.fragmentCosts.set(key, cost)
  return cost
}

export function operationCost(schema: GraphQLSchema, operation: ExecutingOperation): number {
  const root = schema.getRootType(operation.operation.operation)
  if (!root) return 0
  const cost = selectionCost(operation.operation.selectionSet, root, { schema, operation, fragmentCosts: new Map() }, undefined)
  // A hostile document can multiply past any float; the report stays a number.
  return Math.min(cost, Number.MAX_SAFE_INTEGER)
}
