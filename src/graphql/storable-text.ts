/**
 * GraphQL's side of the rule in src/storable-text.ts: string literals of the document's arguments
 * and variable defaults, and every variable the request sent, are checked before anything
 * executes. Text PostgreSQL cannot store is BAD_USER_INPUT naming the argument or variable path,
 * and nothing runs. (A literal lone surrogate, `"\ud800"`, is already a GraphQL syntax error;
 * `"\u0000"` is valid GraphQL and is caught here.)
 */
import type { FastifyInstance } from 'fastify'
import { valueFromASTUntyped, visit, type DocumentNode, type ValueNode } from 'graphql'
import { validationFailed, type FieldError } from '../errors.ts'
import { findUnstorableText } from '../storable-text.ts'

function errorsIn(value: unknown, root: string, location: 'argument' | 'variable'): FieldError[] {
  return findUnstorableText(value).map(({ path, message }) => ({ in: location, name: [root, ...path].join('.'), message }))
}

/** A literal with its variables left out: those are checked as variables. */
function literal(node: ValueNode): unknown {
  return valueFromASTUntyped(node, {})
}

export function unstorableTextInOperation(document: DocumentNode, variables: Record<string, unknown> | undefined): FieldError[] {
  const errors: FieldError[] = []
  visit(document, {
    Argument(node) {
      errors.push(...errorsIn(literal(node.value), node.name.value, 'argument'))
      return false
    },
    VariableDefinition(node) {
      if (node.defaultValue) errors.push(...errorsIn(literal(node.defaultValue), node.variable.name.value, 'variable'))
      return false
    },
  })
  for (const [name, value] of Object.entries(variables ?? {})) errors.push(...errorsIn(value, name, 'variable'))
  return errors
}

export function refuseUnstorableText(app: FastifyInstance): void {
  app.graphql.addHook('preExecution', async (_schema, document, _context, variables) => {
    const errors = unstorableTextInOperation(document, variables as Record<string, unknown> | undefined)
    if (errors.length > 0) throw validationFailed(errors)
  })
}
