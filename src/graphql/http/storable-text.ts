/**
 * GraphQL's side of the rule in src/storable-text.ts: string literals of the document's arguments
 * and variable defaults, and every variable the request sent, are checked before anything
 * executes. Text PostgreSQL cannot store is BAD_USER_INPUT naming the argument or variable path,
 * and nothing runs. (A literal lone surrogate, `"\ud800"`, is already a GraphQL syntax error;
 * `"\u0000"` is valid GraphQL and is caught here.)
 */
import type { FastifyInstance } from 'fastify'
import { valueFromASTUntyped, visit, type DocumentNode, type ValueNode } from 'graphql'
import { validationFailed, type FieldError } from '../../errors.ts'
import { findUnstorableText } from '../../storable-text.ts'

function errorsIn(value: unknown, root: string, location: 'argument' | 'variable'): FieldError[] {
  return findUnstorableText(value).map(({ path, message }) => ({ in: location, name: [root, ...path].join('.'), message }))
}

/** A literal with its variables left out: those are checked as variables. */
function literal(node: ValueNode): unknown {
  return valueFromASTUntyped(node, {})
}

/** Unstorable text in the document's own literals: argument values and variable defaults. */
function unstorableTextInLiterals(document: DocumentNode): FieldError[] {
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
  return errors
}

function unstorableTextInVariables(variables: Record<string, unknown> | undefined): FieldError[] {
  return Object.entries(variables ?? {}).flatMap(([name, value]) => errorsIn(value, name, 'variable'))
}

export function refuseUnstorableText(app: FastifyInstance): void {
  // Mercurius hands the same DocumentNode again for a query text it has parsed before (its LRU),
  // so the literals are walked once per document, not per request.
  const inLiterals = new WeakMap<DocumentNode, FieldError[]>()
  app.graphql.addHook('preExecution', async (_schema, document, _context, variables) => {
    let literalErrors = inLiterals.get(document)
    if (!literalErrors) inLiterals.set(document, (literalErrors = unstorableTextInLiterals(document)))
    const errors = [...literalErrors, ...unstorableTextInVariables(variables as Record<string, unknown> | undefined)]
    if (errors.length > 0) throw validationFailed(errors)
  })
}
