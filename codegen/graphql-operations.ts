/**
 * operations/*.graphql → two files:
 *   src/generated/graphql/persisted-queries.json — the allow-list of persisted queries, keyed by
 *     the SHA-256 of each document's exact text (the automatic persisted queries protocol's hash);
 *   src/generated/graphql/operations.ts — a typed document per operation: its text, hash, and the
 *     TypeScript types of its variables and result, derived from the selection against the schema.
 * Every document must validate against schema.graphql.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  buildSchema,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  parse,
  typeFromAST,
  validate,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql'
import { banner, type GeneratedFile } from './generated-file.ts'

const SCALARS: Record<string, string> = {
  ID: 'string',
  String: 'string',
  Int: 'number',
  Float: 'number',
  Boolean: 'boolean',
  DateTime: 'string',
}

function scalar(type: GraphQLScalarType | GraphQLEnumType): string {
  if (type instanceof GraphQLEnumType)
    return type
      .getValues()
      .map((value) => `'${value.name}'`)
      .join(' | ')
  return SCALARS[type.name] ?? 'unknown'
}

function outputType(type: GraphQLOutputType, selection: SelectionSetNode | undefined, indent: string, where: string): string {
  if (type instanceof GraphQLNonNull) return outputType(type.ofType, selection, indent, where).replace(/ \| null$/, '')
  if (type instanceof GraphQLList) return `Array<${outputType(type.ofType, selection, indent, where)}> | null`
  if (type instanceof GraphQLScalarType || type instanceof GraphQLEnumType) return `${scalar(type)} | null`
  if (!(type instanceof GraphQLObjectType) || !selection) throw new Error(`${where}: unsupported selection on ${String(type)}`)
  return `${objectType(type, selection, indent, where)} | null`
}

function objectType(type: GraphQLObjectType, selectionSet: SelectionSetNode, indent: string, where: string): string {
  const inner = `${indent}  `
  const lines = selectionSet.selections.map((selection) => {
    if (selection.kind !== Kind.FIELD) throw new Error(`${where}: fragments are not supported in operations/ documents`)
    const name = selection.alias?.value ?? selection.name.value
    if (selection.name.value === '__typename') return `${inner}${name}: '${type.name}'`
    const field = type.getFields()[selection.name.value]!
    return `${inner}${name}: ${outputType(field.type, selection.selectionSet, inner, `${where}.${name}`)}`
  })
  return `{\n${lines.join('\n')}\n${indent}}`
}

function inputType(type: GraphQLInputType): string {
  if (type instanceof GraphQLNonNull) return inputType(type.ofType).replace(/ \| null$/, '')
  if (type instanceof GraphQLList) return `Array<${inputType(type.ofType)}> | null`
  if (type instanceof GraphQLInputObjectType) return `types.${type.name} | null`
  return `${scalar(type as GraphQLScalarType | GraphQLEnumType)} | null`
}

function operationTypes(schema: GraphQLSchema, operation: OperationDefinitionNode, text: string, file: string): string {
  const name = operation.name?.value
  if (!name) throw new Error(`operations/${file}: every operation needs a name`)
  const root =
    operation.operation === 'query'
      ? schema.getQueryType()
      : operation.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType()
  const variables = (operation.variableDefinitions ?? []).map((definition) => {
    const type = typeFromAST(schema, definition.type as never) as GraphQLInputType
    const optional = !(type instanceof GraphQLNonNull) || definition.defaultValue !== undefined
    return `  ${definition.variable.name.value}${optional ? '?' : ''}: ${inputType(type)}`
  })
  const hash = createHash('sha256').update(text, 'utf8').digest('hex')
  return [
    `export interface ${name}Variables {${variables.length ? `\n${variables.join('\n')}\n` : ''}}`,
    `export type ${name}Result = ${objectType(root!, operation.selectionSet, '', `operations/${file}`)}`,
    `export const ${name}Document: TypedDocument<${name}Result, ${name}Variables> = {`,
    `  operationName: '${name}',`,
    `  sha256Hash: '${hash}',`,
    `  query: ${JSON.stringify(text)},`,
    '}',
  ].join('\n')
}

export async function generateGraphqlOperationFiles(root: string): Promise<GeneratedFile[]> {
  const schema = buildSchema(await readFile(join(root, 'schema.graphql'), 'utf8'))
  const files = (await readdir(join(root, 'operations')).catch(() => [] as string[])).filter((name) => name.endsWith('.graphql')).sort()
  const manifest: Record<string, string> = {}
  const typed: string[] = []
  for (const file of files) {
    const text = await readFile(join(root, 'operations', file), 'utf8')
    const document = parse(text)
    const errors = validate(schema, document)
    if (errors.length > 0)
      throw new Error(`operations/${file} does not validate against schema.graphql: ${errors.map((e) => e.message).join('; ')}`)
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    if (operations.length !== 1) throw new Error(`operations/${file}: one operation per file, so that its hash names it`)
    manifest[createHash('sha256').update(text, 'utf8').digest('hex')] = text
    typed.push(operationTypes(schema, operations[0]!, text, file))
  }
  const typesFile = [
    banner('codegen/graphql-operations.ts', 'operations/*.graphql'),
    "import type * as types from './types.ts'",
    '',
    '/** A GraphQL document with the types of its result and variables. */',
    'export interface TypedDocument<Result, Variables> {',
    '  operationName: string',
    '  sha256Hash: string',
    '  query: string',
    '  /** Never set: carries the types. */',
    '  __types?: { result: Result; variables: Variables }',
    '}',
    '',
    typed.join('\n\n'),
    '',
  ].join('\n')
  return [
    { path: 'src/generated/graphql/persisted-queries.json', contents: `${JSON.stringify(manifest, null, 2)}\n` },
    { path: 'src/generated/graphql/operations.ts', contents: typesFile },
  ]
}
