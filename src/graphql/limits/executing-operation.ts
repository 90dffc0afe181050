/**
 * The operation a GraphQL request will execute, and its variables, found the way graphql-js finds
 * them. Depth, cost and the mutation count are all measured on this and nothing else, so a limit
 * cannot be passed by pricing one operation of a document and executing another.
 */
import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type GraphQLError,
  type GraphQLSchema,
  type InlineFragmentNode,
  type OperationDefinitionNode,
} from 'graphql'
// graphql-js' own operation selection and variable coercion: the function its `execute` calls,
// and Mercurius' variable check with it (marked internal in graphql's typings, but exported, and
// Mercurius depends on it too). Named → that operation, unnamed → the only one, several without a
// name → graphql's own error; variables coerced with their declared defaults.
import { buildExecutionContext } from 'graphql/execution/execute.js'
import type { MercuriusContext } from 'mercurius'
import { isObject } from '../http/request-problems.ts'

export interface ExecutingOperation {
  operation: OperationDefinitionNode
  fragments: Readonly<Record<string, FragmentDefinitionNode>>
  /** Coerced: declared defaults applied, exactly the values resolvers receive. */
  variables: Readonly<Record<string, unknown>>
}

/** The operation graphql-js will execute, or the errors it would answer instead of executing. */
export function executingOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): ExecutingOperation | readonly GraphQLError[] {
  const context = buildExecutionContext({ schema, document, operationName, variableValues: rawVariables })
  if (!('operation' in context)) return context
  return { operation: context.operation, fragments: context.fragments, variables: context.variableValues }
}

/**
 * A field of the GraphQL request Mercurius executes for this context, read where Mercurius'
 * routes read it (mercurius/lib/routes.js): the body of a POST (one entry of it in a batch), the
 * query string of a GET and of the HEAD Fastify answers with the GET handler. Automatic and
 * allow-listed persisted queries take them from the same place: only `query` comes from the store.
 */
function requestField(context: MercuriusContext, name: 'operationName' | 'variables'): unknown {
  const request = context.reply?.request
  if (!request) return undefined
  const fields: unknown = request.method === 'POST' ? request.body : request.query
  const entry: unknown = Array.isArray(fields) ? fields[context.operationId ?? 0] : fields
  return isObject(entry) ? entry[name] : undefined
}

/**
 * The `operationName` Mercurius hands to graphql for this request (its hooks are not given it).
 * Without an HTTP request (an in-process `app.graphql` call) there is no name to read: a document
 * with several operations is then refused, never guessed.
 */
export function requestedOperationName(context: MercuriusContext): string | undefined {
  const name = requestField(context, 'operationName')
  return name === undefined || name === null ? undefined : String(name)
}

/**
 * The variables Mercurius will hand to graphql for this request, for the hooks that run before it
 * is given them (preValidation): an object in a POST body, JSON text in a GET's query string.
 * Undefined when there are none or they are not an object, which Mercurius refuses itself.
 */
export function requestedVariables(context: MercuriusContext): Record<string, unknown> | undefined {
  let variables = requestField(context, 'variables')
  if (typeof variables === 'string') {
    try {
      variables = JSON.parse(variables)
    } catch {
      return undefined
    }
  }
  return isObject(variables) ? variables : undefined
}

/** Whether graphql-js executes a selection, by its `@skip` and `@include` (with coerced variables). */
export function isIncluded(
  node: FieldNode | FragmentSpreadNode | InlineFragmentNode,
  variables: Readonly<Record<string, unknown>>,
): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false
  if (getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if === false) return false
  return true
}
