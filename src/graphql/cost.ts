/**
 * The cost model of decisions §9, computed before execution on the operation that will execute
 * (executing-operation.ts): a scalar or enum field costs 0; an object field costs 1 plus its
 * selection; a list field multiplies that by its `first`/`last` argument, or by the default page
 * size (20) where it has none. Arguments are read as graphql-js will pass them to the resolver:
 * from literals or coerced variables, declared variable defaults included. A selection that
 * `@skip`/`@include` leave out costs nothing. Introspection (`__schema`, `__type`, `__typename`)
 * is free, so tools that introspect are never refused.
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
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql'
import { isIncluded, type ExecutingOperation } from './executing-operation.ts'

export const DEFAULT_LIST_SIZE = 20

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

interface CostWalk {
  schema: GraphQLSchema
  operation: ExecutingOperation
  /**
   * Each fragment is priced once per request, however often it is spread: without this, a short
   * document spreading fragments into fragments costs exponential time just to price.
   */
  fragmentCosts: Map<string, number>
}

function selectionCost(selectionSet: SelectionSetNode | undefined, parent: GraphQLCompositeType, walk: CostWalk): number {
  if (!selectionSet) return 0
  let total = 0
  for (const selection of selectionSet.selections) {
    if (!isIncluded(selection, walk.operation.variables)) continue
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue
      if (!isObjectType(parent) && !isInterfaceType(parent)) continue
      const field = parent.getFields()[selection.name.value]
      if (!field) continue
      const named = getNamedType(field.type)
      if (!isCompositeType(named)) continue
      const single = 1 + selectionCost(selection.selectionSet, named, walk)
      total += getNullableType(field.type) instanceof GraphQLList ? single * listSize(field, selection, walk.operation.variables) : single
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent
      total += selectionCost(selection.selectionSet, isCompositeType(type) ? type : parent, walk)
    } else {
      total += fragmentCost(selection.name.value, parent, walk)
    }
  }
  return total
}

function fragmentCost(name: string, parent: GraphQLCompositeType, walk: CostWalk): number {
  const known = walk.fragmentCosts.get(name)
  if (known !== undefined) return known
  const fragment = walk.operation.fragments[name]
  if (!fragment) return 0
  // A fragment cycle is refused by graphql's validation before this runs; were one here, it adds nothing.
  walk.fragmentCosts.set(name, 0)
  const type = walk.schema.getType(fragment.typeCondition.name.value)
  const cost = selectionCost(fragment.selectionSet, isCompositeType(type) ? type : parent, walk)
  walk.fragmentCosts.set(name, cost)
  return cost
}

export function operationCost(schema: GraphQLSchema, operation: ExecutingOperation): number {
  const root = schema.getRootType(operation.operation.operation)
  if (!root) return 0
  const cost = selectionCost(operation.operation.selectionSet, root, { schema, operation, fragmentCosts: new Map() })
  // A hostile document can multiply past any float; the report stays a number.
  return Math.min(cost, Number.MAX_SAFE_INTEGER)
}
