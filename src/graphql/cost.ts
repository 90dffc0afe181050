/**
 * The cost model of decisions §9, computed from the document before execution: a scalar or enum
 * field costs 0; an object field costs 1 plus its selection; a list field multiplies that by its
 * `first`/`last` argument, or by the default page size (20) where it has none. Introspection
 * (`__schema`, `__type`, `__typename`) is free, so tools that introspect are never refused.
 */
import {
  getNamedType,
  getNullableType,
  GraphQLList,
  isCompositeType,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql'

export const DEFAULT_LIST_SIZE = 20

function argumentValue(node: ValueNode | undefined, variables: Record<string, unknown>): number | undefined {
  if (!node) return undefined
  if (node.kind === Kind.INT) return Number(node.value)
  if (node.kind === Kind.VARIABLE) {
    const value = variables[node.name.value]
    return typeof value === 'number' ? value : undefined
  }
  return undefined
}

function listSize(field: FieldNode, variables: Record<string, unknown>): number {
  for (const name of ['first', 'last']) {
    const value = argumentValue(field.arguments?.find((argument) => argument.name.value === name)?.value, variables)
    // A negative or absurd size is refused by the resolver; the cost uses what was asked.
    if (value !== undefined && value > 0) return value
  }
  return DEFAULT_LIST_SIZE
}

interface CostContext {
  schema: GraphQLSchema
  fragments: Record<string, FragmentDefinitionNode>
  variables: Record<string, unknown>
}

function selectionCost(selectionSet: SelectionSetNode | undefined, parent: GraphQLCompositeType, context: CostContext, seen: Set<string>): number {
  if (!selectionSet) return 0
  let total = 0
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue
      if (!isObjectType(parent) && !isInterfaceType(parent)) continue
      const field = parent.getFields()[selection.name.value]
      if (!field) continue
      const named = getNamedType(field.type)
      if (!isCompositeType(named)) continue
      const single = 1 + selectionCost(selection.selectionSet, named, context, seen)
      total += getNullableType(field.type) instanceof GraphQLList ? single * listSize(selection, context.variables) : single
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? context.schema.getType(selection.typeCondition.name.value) : parent
      total += selectionCost(selection.selectionSet, isCompositeType(type) ? type : parent, context, seen)
    } else {
      const name = selection.name.value
      const fragment = context.fragments[name]
      if (!fragment || seen.has(name)) continue
      const type = context.schema.getType(fragment.typeCondition.name.value)
      total += selectionCost(fragment.selectionSet, isCompositeType(type) ? type : parent, context, new Set([...seen, name]))
    }
  }
  return total
}

export function selectOperation(document: DocumentNode, operationName: string | undefined | null): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
  return operationName ? operations.find((operation) => operation.name?.value === operationName) : operations[0]
}

export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined | null,
  variables: Record<string, unknown> = {},
): number {
  const operation = selectOperation(document, operationName)
  if (!operation) return 0
  const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType()
  if (!root) return 0
  const fragments = Object.fromEntries(
    document.definitions
      .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((definition) => [definition.name.value, definition]),
  )
  return selectionCost(operation.selectionSet, root, { schema, fragments, variables }, new Set())
}
