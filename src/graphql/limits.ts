/**
 * Limits applied before execution (decisions §9). The depth rule counts the selections a query
 * makes on our types; the introspection subtree (`__schema`, `__type`) is exempt, so the standard
 * introspection query that GraphiQL and code generators send is never refused.
 */
import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql'

function depthOf(
  selectionSet: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
  visited: Set<string>,
): number {
  if (!selectionSet) return 0
  let deepest = 0
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue
      deepest = Math.max(deepest, selection.selectionSet ? 1 + depthOf(selection.selectionSet, fragments, visited) : 1)
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      deepest = Math.max(deepest, depthOf(selection.selectionSet, fragments, visited))
    } else {
      const name = selection.name.value
      const fragment = fragments[name]
      // A fragment cycle is reported by graphql's own NoFragmentCycles rule.
      if (!fragment || visited.has(name)) continue
      deepest = Math.max(deepest, depthOf(fragment.selectionSet, fragments, new Set([...visited, name])))
    }
  }
  return deepest
}

export function depthLimitRule(maxDepth: number) {
  return (context: ValidationContext): ASTVisitor => {
    const document = context.getDocument()
    const fragments = Object.fromEntries(
      document.definitions
        .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
        .map((definition) => [definition.name.value, definition]),
    )
    return {
      OperationDefinition(operation) {
        const depth = depthOf(operation.selectionSet, fragments, new Set())
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(`The operation nests ${depth} levels deep; the limit is ${maxDepth}.`, {
              nodes: [operation],
              extensions: { code: 'DEPTH_LIMIT_EXCEEDED', depth, maxDepth },
            }),
          )
        }
      },
    }
  }
}
