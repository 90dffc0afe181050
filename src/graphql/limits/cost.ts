/**
 * The cost model of decisions §9 and §13 ("output is bounded like input"), computed before
 * execution on the operation that will execute (executing-operation.ts). Every selected field
 * counts, aliases and `__typename` included, as many times as it is selected:
 *
 * - a scalar or enum field costs a tenth of a point; the scalars of one selection set (fragments
 *   spread into it included) are added up and rounded up, so `{ id name }` costs 1 and 25 of them 3;
 * - an object field costs 1 plus its selection;
 * - a list field multiplies that by its `first`/`last` argument, or by the default page size
 *   (DEFAULT_PAGE_SIZE, 20) where it has none, or by the number of its `ids` (`nodes`); a list of
 *   scalars counts that many scalars.
 *
 * So `orders(first: 48) { a1: id … a7000: id }` costs 48 × (1 + ⌈700⌉) = 33,648: what a response
 * carries is paid for, not only what it fetches. Arguments are read as graphql-js will pass them to
 * the resolver: from literals or coerced variables, declared variable defaults included. A
 * selection that `@skip`/`@include` leave out costs nothing.
 *
 * A connection (`ordersConnection(first: 10) { edges { cursor node { … } } pageInfo { … } }`) is
 * priced like the list it mirrors (`orders(first: 10) { … }`): its `first` × the node's selection.
 * The connection, its edges and `pageInfo` are bookkeeping around the records and add no point of
 * their own as objects; the scalars selected on them (an edge's `cursor`, `pageInfo`'s fields)
 * count like any scalar, `edges`' multiplied by the connection's page size. A connection's
 * `totalCount` is the one exception: it costs TOTAL_COUNT_COST (a default page of records, 20
 * points) rather than a scalar's tenth (decisions §16, §17).
 *
 * Introspection stays free as tools send it: inside `__schema` and `__type`, a field costs nothing
 * of its own. An aliased field there costs what any field costs, multiplied by the introspection
 * lists above it (20 each), since aliases are how one response repeats the schema many times over;
 * graphql's own MaxIntrospectionDepthRule bounds the nesting.
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
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql'
import { DEFAULT_PAGE_SIZE } from '../../pagination/page-size.ts'
import { isIncluded, type ExecutingOperation } from './executing-operation.ts'

/** A list without `first`/`last` returns a page of the default size, so it costs that many. */
export const DEFAULT_LIST_SIZE = DEFAULT_PAGE_SIZE

/**
 * What a selected `totalCount` costs: one default page of records (DEFAULT_LIST_SIZE records of
 * one point each), as when it was a count that read every matching row. It is now read from the
 * counts kept where rows change, a few rows whatever the size of the table (decisions §17); the
 * price stays, because lowering it later breaks no client while raising it would refuse queries
 * that clients near the limit send today.
 */
export const TOTAL_COUNT_COST = 20

/** A scalar costs a tenth of a point: ten scalars of one selection set cost what one object costs. */
export const SCALARS_PER_POINT = 10

/** What a selection set costs for one instance of the object it is selected on. */
interface SelectionCost {
  /** The object fields' points, each already multiplied by the list sizes below the selection set. */
  points: number
  /** How many scalars it selects, priced together (rounded up) by the field that owns the set. */
  scalars: number
  /** Fields it selects, nested ones included and lists not multiplied: what graphql-jit would compile. */
  fields: number
}

const NOTHING: SelectionCost = { points: 0, scalars: 0, fields: 0 }

function add(a: SelectionCost, b: SelectionCost): SelectionCost {
  return { points: a.points + b.points, scalars: a.scalars + b.scalars, fields: a.fields + b.fields }
}

/** The points of one instance of a selection set, its scalars rounded up. */
function rounded(cost: SelectionCost): number {
  return cost.points + Math.ceil(cost.scalars / SCALARS_PER_POINT)
}

function listSize(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: ExecutingOperation['variables']): number {
  let args: Record<string, unknown>
  try {
    args = getArgumentValues(field, node, variables)
  } catch {
    // An argument that does not coerce fails its field when it executes: nothing is fetched for it.
    return DEFAULT_LIST_SIZE
  }
  // A list of records by id (`nodes(ids:)`) holds one per id.
  if (Array.isArray(args.ids)) return args.ids.length
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

/** The field a selection names, the introspection fields graphql-js adds to every schema included. */
function fieldDefinition(schema: GraphQLSchema, parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef
  if (parent === schema.getQueryType() && name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef
  if (parent === schema.getQueryType() && name === TypeMetaFieldDef.name) return TypeMetaFieldDef
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined
}

interface CostWalk {
  schema: GraphQLSchema
  operation: ExecutingOperation
  /**
   * Each fragment is priced once per request (per page size and introspection mode), however often
   * it is spread: without this, a short document spreading fragments into fragments costs
   * exponential time just to price.
   */
  fragmentCosts: Map<string, SelectionCost>
}

/**
 * `pageSize` is set while walking a connection's own selection (directly or through fragments
 * on the connection type): the `first` of that connection field, which its `edges` multiply by.
 * `free` is set inside an unaliased introspection field (`__schema`, `__type`).
 */
function fieldCost(
  selection: FieldNode,
  parent: GraphQLCompositeType,
  walk: CostWalk,
  pageSize: number | undefined,
  free: boolean,
): SelectionCost {
  const name = selection.name.value
  const field = fieldDefinition(walk.schema, parent, name)
  // An unknown field is refused by graphql's validation before this runs.
  if (!field) return NOTHING
  const aliased = selection.alias !== undefined
  const freeHere = !aliased && (free || field === SchemaMetaFieldDef || field === TypeMetaFieldDef)
  if (isConnectionType(parent) && name === 'totalCount') {
    return { points: freeHere ? 0 : TOTAL_COUNT_COST, scalars: 0, fields: 1 }
  }
  const isList = getNullableType(field.type) instanceof GraphQLList
  const named = getNamedType(field.type)
  if (!isCompositeType(named)) {
    if (freeHere) return { points: 0, scalars: 0, fields: 1 }
    return { points: 0, scalars: isList ? listSize(field, selection, walk.operation.variables) : 1, fields: 1 }
  }
  const inner = (size: number | undefined) => selectionCost(selection.selectionSet, named, walk, size, freeHere)
  if (isConnectionType(parent) && (name === 'edges' || name === 'pageInfo')) {
    const selected = inner(undefined)
    const points = name === 'edges' ? (pageSize ?? DEFAULT_LIST_SIZE) * rounded(selected) : rounded(selected)
    return { points, scalars: 0, fields: 1 + selected.fields }
  }
  if (isConnectionType(named)) {
    const selected = inner(listSize(field, selection, walk.operation.variables))
    return { points: rounded(selected), scalars: 0, fields: 1 + selected.fields }
  }
  const selected = inner(undefined)
  const single = (freeHere ? 0 : 1) + rounded(selected)
  const points = isList ? single * listSize(field, selection, walk.operation.variables) : single
  return { points, scalars: 0, fields: 1 + selected.fields }
}

function selectionCost(
  selectionSet: SelectionSetNode | undefined,
  parent: GraphQLCompositeType,
  walk: CostWalk,
  pageSize: number | undefined,
  free: boolean,
): SelectionCost {
  if (!selectionSet) return NOTHING
  let total = NOTHING
  for (const selection of selectionSet.selections) {
    if (!isIncluded(selection, walk.operation.variables)) continue
    if (selection.kind === Kind.FIELD) {
      total = add(total, fieldCost(selection, parent, walk, pageSize, free))
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent
      total = add(total, selectionCost(selection.selectionSet, isCompositeType(type) ? type : parent, walk, pageSize, free))
    } else {
      total = add(total, fragmentCost(selection.name.value, parent, walk, pageSize, free))
    }
  }
  return total
}

function fragmentCost(
  name: string,
  parent: GraphQLCompositeType,
  walk: CostWalk,
  pageSize: number | undefined,
  free: boolean,
): SelectionCost {
  // A fragment on a connection costs per page size: the same fragment under `first: 2` and
  // `first: 50` is priced once for each.
  const key = `${name}@${pageSize ?? ''}${free ? '@free' : ''}`
  const known = walk.fragmentCosts.get(key)
  if (known !== undefined) return known
  const fragment = walk.operation.fragments[name]
  if (!fragment) return NOTHING
  // A fragment cycle is refused by graphql's validation before this runs; were one here, it adds nothing.
  walk.fragmentCosts.set(key, NOTHING)
  const type = walk.schema.getType(fragment.typeCondition.name.value)
  const cost = selectionCost(fragment.selectionSet, isCompositeType(type) ? type : parent, walk, pageSize, free)
  walk.fragmentCosts.set(key, cost)
  return cost
}

export interface OperationPrice {
  /** The points the operation costs (`extensions.cost.requestedQueryCost`). */
  cost: number
  /** The fields it selects, fragments expanded and lists not multiplied (limits.ts: whether to compile it). */
  fields: number
}

export function priceOperation(schema: GraphQLSchema, operation: ExecutingOperation): OperationPrice {
  const root = schema.getRootType(operation.operation.operation)
  if (!root) return { cost: 0, fields: 0 }
  const selected = selectionCost(operation.operation.selectionSet, root, { schema, operation, fragmentCosts: new Map() }, undefined, false)
  // A hostile document can multiply past any float; the report stays a number.
  return { cost: Math.min(rounded(selected), Number.MAX_SAFE_INTEGER), fields: selected.fields }
}

export function operationCost(schema: GraphQLSchema, operation: ExecutingOperation): number {
  return priceOperation(schema, operation).cost
}
