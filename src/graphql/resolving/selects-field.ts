/**
 * Looking ahead at what a resolver's field selects, so that a resolver reads in one statement what
 * the fields below it will need (the related records of a list) and skips work nobody asked for (a
 * list's per-record cursors). Selections are read as graphql-js executes them: through named and
 * inline fragments, every alias of a field together, `@skip`/`@include` evaluated with the
 * request's variables.
 */
import type { FieldNode, FragmentDefinitionNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql'
import { isIncluded } from '../limits/executing-operation.ts'

/** What a selection is read against: the document's fragments and the request's coerced variables. */
export type SelectionContext = Pick<GraphQLResolveInfo, 'fragments' | 'variableValues'>

/** The fields selected under some field nodes, by field name (not alias); each name with every node that selects it. */
export type SelectedFields = ReadonlyMap<string, readonly FieldNode[]>

function collect(
  selectionSet: SelectionSetNode | undefined,
  context: SelectionContext,
  into: Map<string, FieldNode[]>,
  seen: Set<string>,
): void {
  if (!selectionSet) return
  for (const selection of selectionSet.selections) {
    if (!isIncluded(selection, context.variableValues)) continue
    if (selection.kind === 'Field') {
      const nodes = into.get(selection.name.value)
      if (nodes) nodes.push(selection)
      else into.set(selection.name.value, [selection])
    } else if (selection.kind === 'InlineFragment') {
      collect(selection.selectionSet, context, into, seen)
    } else if (!seen.has(selection.name.value)) {
      // A fragment spread twice selects nothing more the second time.
      seen.add(selection.name.value)
      const fragment: FragmentDefinitionNode | undefined = context.fragments[selection.name.value]
      collect(fragment?.selectionSet, context, into, seen)
    }
  }
}

/**
 * The fields selected directly under `nodes` (a field's nodes, one per alias or repetition).
 * Type conditions are not evaluated: the fields this is used on return object types, whose
 * fragments all apply.
 */
export function selectedFieldsOf(nodes: readonly FieldNode[], context: SelectionContext): SelectedFields {
  const fields = new Map<string, FieldNode[]>()
  for (const node of nodes) collect(node.selectionSet, context, fields, new Set())
  return fields
}

/** The fields selected directly under the field being resolved. */
export function selectedFields(info: GraphQLResolveInfo): SelectedFields {
  return selectedFieldsOf(info.fieldNodes, info)
}

/** The fields selected under `path` below the field being resolved (`['edges', 'node']` of a connection). */
export function selectedFieldsAt(info: GraphQLResolveInfo, path: readonly string[]): SelectedFields {
  let fields = selectedFields(info)
  for (const name of path) fields = selectedFieldsOf(fields.get(name) ?? [], info)
  return fields
}
