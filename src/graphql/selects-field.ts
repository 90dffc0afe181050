/**
 * Whether a resolver's field selects a subfield (through fragments too), so that a resolver can
 * skip work for a field nobody asked for (a list's per-record cursors). `@skip`/`@include` are
 * not evaluated: a conditionally selected field counts as selected, which only costs the work.
 */
import type { FragmentDefinitionNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql'

function selectionSelects(
  selectionSet: SelectionSetNode | undefined,
  name: string,
  fragments: Record<string, FragmentDefinitionNode>,
  seen: Set<string>,
): boolean {
  if (!selectionSet) return false
  for (const selection of selectionSet.selections) {
    if (selection.kind === 'Field') {
      if (selection.name.value === name) return true
    } else if (selection.kind === 'InlineFragment') {
      if (selectionSelects(selection.selectionSet, name, fragments, seen)) return true
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value)
      if (selectionSelects(fragments[selection.name.value]?.selectionSet, name, fragments, seen)) return true
    }
  }
  return false
}

/** Whether the field being resolved selects `name` directly under it. */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  return info.fieldNodes.some((node) => selectionSelects(node.selectionSet, name, info.fragments, new Set()))
}
