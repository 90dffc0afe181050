/**
 * openapi.yaml + schema.graphql → src/generated/required-scopes.ts: the authorization policy as the
 * contracts write it (decisions §2). `requiredScopes` holds what every REST operation
 * (`x-required-scopes`, by operationId) and every GraphQL field (`@requiresScopes`, by
 * `Type.field`; every root field, with or without it) requires; `serviceOperationScopes` holds what
 * each service operation of codegen/service-operations.ts enforces, the scopes of the contract
 * operations it serves. Generation fails, naming the operations, when those disagree (REST and
 * GraphQL would then answer differently), when an operation that needs a scope is served by no
 * service operation (its scope would go unenforced), or when a scope is not one the tokens know.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildSchema, getDirectiveValues, type GraphQLSchema, isObjectType } from 'graphql'
import { parse } from 'yaml'
import { SCOPES, type ServedOperations, serviceOperations } from './service-operations.ts'
import { banner, type GeneratedFile } from './generated-file.ts'
import { restRequiredScopes } from './openapi.ts'

const GENERATOR = 'codegen/required-scopes.ts'
const SOURCES = 'openapi.yaml, schema.graphql and codegen/service-operations.ts'
export const SCOPES_DIRECTIVE = 'requiresScopes'

/** What every field that carries the directive, and every root field, requires, by `Type.field`. */
export function graphqlRequiredScopes(schema: GraphQLSchema): Map<string, unknown[]> {
  const directive = schema.getDirective(SCOPES_DIRECTIVE)
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]
  const found = new Map<string, unknown[]>()
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue
    for (const field of Object.values(type.getFields())) {
      const values = directive && field.astNode ? getDirectiveValues(directive, field.astNode) : undefined
      if (values) found.set(`${type.name}.${field.name}`, values.scopes as unknown[])
      else if (roots.includes(type)) found.set(`${type.name}.${field.name}`, [])
    }
  }
  return found
}

function problem(message: string): never {
  throw new Error(`${GENERATOR}: ${message}`)
}

const sameScopes = (a: readonly unknown[], b: readonly unknown[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort())

/** The generated file for two parsed contracts and the service operations. Pure, and deterministic. */
export function requiredScopesFileOf(
  rest: ReadonlyMap<string, unknown[]>,
  graphql: ReadonlyMap<string, unknown[]>,
  served: Readonly<Record<string, ServedOperations>> = serviceOperations,
  known: readonly string[] = SCOPES,
): GeneratedFile {
  const required = new Map<string, unknown[]>([...rest, ...graphql])
  for (const [operation, scopes] of required) {
    const unknown = scopes.filter((scope) => typeof scope !== 'string' || !known.includes(scope))
    if (unknown.length > 0) problem(`${operation} requires ${JSON.stringify(unknown)}, not a scope (${known.join(', ')})`)
  }
  const servedBy = new Map<string, string>()
  const perService: Record<string, unknown[]> = {}
  for (const [service, { rest: restIds, graphql: fields }] of Object.entries(served)) {
    const operations = [...restIds, ...fields]
    if (operations.length === 0) problem(`service operation ${service} serves no contract operation`)
    for (const [ids, table, contract] of [
      [restIds, rest, 'openapi.yaml has no operationId'],
      [fields, graphql, 'schema.graphql has no root field or field with @requiresScopes'],
    ] as const) {
      for (const id of ids) if (!table.has(id)) problem(`service operation ${service}: ${contract} ${id}`)
    }
    for (const operation of operations) {
      const other = servedBy.get(operation)
      if (other) problem(`${operation} is served by two service operations, ${other} and ${service}`)
      servedBy.set(operation, service)
    }
    const first = required.get(operations[0]!)!
    const disagreeing = operations.filter((operation) => !sameScopes(required.get(operation)!, first))
    if (disagreeing.length > 0) {
      const list = operations.map((operation) => `${operation} ${JSON.stringify(required.get(operation))}`).join(', ')
      problem(`the operations of service operation ${service} must require the same scopes, and do not: ${list}`)
    }
    perService[service] = [...first].sort()
  }
  const unserved = [...required]
    .filter(([operation, scopes]) => scopes.length > 0 && !servedBy.has(operation))
    .map(([operation]) => operation)
  if (unserved.length > 0) {
    problem(`${unserved.join(', ')} require scopes but no service operation serves them: add them to codegen/service-operations.ts`)
  }
  const table = (entries: Iterable<[string, unknown[]]>) =>
    `{\n${[...entries].map(([key, scopes]) => `  ${JSON.stringify(key)}: ${JSON.stringify(scopes)},\n`).join('')}}`
  return {
    path: 'src/generated/required-scopes.ts',
    contents: [
      banner(GENERATOR, SOURCES),
      '/** The scopes a token may carry (decisions §2); `admin` satisfies every other. */',
      `export const SCOPES = ${JSON.stringify(known)} as const\n`,
      'export type Scope = (typeof SCOPES)[number]\n',
      '/**',
      ' * The scopes each contract operation requires, all of them (`admin` satisfies any): REST by',
      ' * operationId (x-required-scopes), GraphQL by `Type.field` (@requiresScopes; every root field).',
      ' */',
      `export const requiredScopes: Readonly<Record<string, readonly Scope[]>> = ${table(required)}\n`,
      '/** A service operation that authorizes (codegen/service-operations.ts). */',
      `export type ServiceOperation =\n${Object.keys(perService)
        .map((name) => `  | ${JSON.stringify(name)}`)
        .join('\n')}\n`,
      '/** What each service operation enforces: the scopes every contract operation it serves requires. */',
      `export const serviceOperationScopes: Readonly<Record<ServiceOperation, readonly Scope[]>> = ${table(Object.entries(perService))}\n`,
    ].join('\n'),
  }
}

export async function generateRequiredScopesFiles(root: string): Promise<GeneratedFile[]> {
  const [yaml, sdl] = await Promise.all([readFile(join(root, 'openapi.yaml'), 'utf8'), readFile(join(root, 'schema.graphql'), 'utf8')])
  return [requiredScopesFileOf(restRequiredScopes(parse(yaml)), graphqlRequiredScopes(buildSchema(sdl)))]
}
