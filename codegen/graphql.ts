/**
 * schema.graphql → src/generated/graphql/types.ts: TypeScript types for every scalar, enum, input,
 * object type and field argument, and the list of root fields (a test asserts each has a resolver).
 *
 * Self-contained on purpose (graphql-js only, no graphql-codegen): the output depends on nothing
 * but the schema, and declarations are sorted by name, so reordering the SDL changes nothing.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  assertValidSchema,
  astFromValue,
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  print,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql'
import { banner, type GeneratedFile } from './generated-file.ts'

/** The built-in scalars, always declared, in this order, whether or not the schema uses them. */
const BUILT_IN_SCALARS: ReadonlyArray<readonly [string, string]> = [
  ['ID', 'string'],
  ['String', 'string'],
  ['Int', 'number'],
  ['Float', 'number'],
  ['Boolean', 'boolean'],
]

/** Custom scalars whose wire form we know; any other custom scalar is `unknown`. */
const CUSTOM_SCALARS: Readonly<Record<string, string>> = {
  DateTime: 'string',
}

/** Code-point order: the same on every machine and locale, unlike localeCompare. */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

const upperFirst = (name: string) => name.charAt(0).toUpperCase() + name.slice(1)
const lowerFirst = (name: string) => name.charAt(0).toLowerCase() + name.slice(1)

/** The TypeScript type of a GraphQL type reference: nullable → `T | null`, lists → `Array<…>`. */
function tsType(type: GraphQLType): string {
  if (isNonNullType(type)) return tsNonNull(type.ofType)
  return `${tsNonNull(type)} | null`
}

function tsNonNull(type: GraphQLType): string {
  if (isNonNullType(type)) return tsNonNull(type.ofType)
  if (isListType(type)) return `Array<${tsType(type.ofType)}>`
  if (isScalarType(type)) return `Scalars['${type.name}']`
  if (isEnumType(type) || isInputObjectType(type)) return type.name
  return `Gql${type.name}`
}

/** A JSDoc comment, or nothing when there is nothing to say. */
function doc(lines: ReadonlyArray<string | null | undefined>, indent = ''): string {
  const given = lines.filter((line): line is string => typeof line === 'string' && line.trim() !== '')
  if (given.length === 0) return ''
  const text = given
    .join('\n')
    .replace(/\*\//g, '*\\/')
    .split('\n')
    .map((line) => line.trimEnd())
  if (text.length === 1) return `${indent}/** ${text[0]} */\n`
  return `${indent}/**\n${text.map((line) => `${indent} *${line ? ` ${line}` : ''}`).join('\n')}\n${indent} */\n`
}

function deprecation(reason: string | null | undefined): string | undefined {
  return reason === null || reason === undefined ? undefined : `@deprecated ${reason}`
}

/** Arguments and input fields: optional when a caller may omit them and nothing fills them in. */
function inputMember(member: GraphQLArgument | GraphQLInputField, indent: string): string {
  const hasDefault = member.defaultValue !== undefined
  const defaultAst = hasDefault ? astFromValue(member.defaultValue, member.type) : null
  const comment = doc(
    [member.description, defaultAst ? `@defaultValue ${print(defaultAst)}` : undefined, deprecation(member.deprecationReason)],
    indent,
  )
  // A default always reaches the resolver, so such a member is never missing (though an explicit
  // null for a nullable one still arrives as null).
  const optional = !isNonNullType(member.type) && !hasDefault
  return `${comment}${indent}${member.name}${optional ? '?' : ''}: ${tsType(member.type)}${optional ? ' | undefined' : ''}`
}

function interfaceDeclaration(name: string, description: string | null | undefined, members: string[]): string {
  const body = members.length === 0 ? '{}' : `{\n${members.join('\n')}\n}`
  return `${doc([description])}export interface ${name} ${body}`
}

function argsName(type: GraphQLNamedType, field: GraphQLField<unknown, unknown>): string {
  return `${type.name}${upperFirst(field.name)}Args`
}

function rootTypes(schema: GraphQLSchema): GraphQLObjectType[] {
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(
    (root): root is GraphQLObjectType => root !== null && root !== undefined,
  )
}

export function generateGraphqlTypes(sdl: string): string {
  const schema = buildSchema(sdl)
  assertValidSchema(schema)
  const types = Object.values(schema.getTypeMap())
    .filter((type) => !type.name.startsWith('__'))
    .sort(byName)

  const declarations: Array<{ name: string; code: string }> = []
  const declare = (name: string, code: string) => declarations.push({ name, code })

  const customScalars = types.filter(isScalarType).filter((scalar) => !BUILT_IN_SCALARS.some(([name]) => name === scalar.name))
  const scalarMembers = [
    ...BUILT_IN_SCALARS.map(([name, ts]) => `  ${name}: ${ts}`),
    ...customScalars.map((scalar) => `${doc([scalar.description], '  ')}  ${scalar.name}: ${CUSTOM_SCALARS[scalar.name] ?? 'unknown'}`),
  ]
  declare('Scalars', interfaceDeclaration('Scalars', 'The TypeScript type of each scalar as it travels in JSON.', scalarMembers))

  for (const type of types.filter(isEnumType)) {
    const values = type.getValues().map((value) => `'${value.name}'`)
    const constName = `${lowerFirst(type.name)}Values`
    declare(type.name, `${doc([type.description])}export type ${type.name} = ${values.join(' | ')}`)
    declare(constName, `/** Every value of ${type.name}, in schema order. */\nexport const ${constName} = [${values.join(', ')}] as const`)
  }

  for (const type of types.filter(isInputObjectType)) {
    const members = Object.values(type.getFields()).map((field) => inputMember(field, '  '))
    declare(type.name, interfaceDeclaration(type.name, type.description, members))
  }

  for (const type of types) {
    if (isUnionType(type)) {
      const members = type.getTypes().map((member) => `Gql${member.name}`)
      declare(`Gql${type.name}`, `${doc([type.description])}export type Gql${type.name} = ${members.join(' | ')}`)
      continue
    }
    if (!isObjectType(type) && !isInterfaceType(type)) continue
    const fields = Object.values(type.getFields())
    const members = fields.map(
      (field) => `${doc([field.description, deprecation(field.deprecationReason)], '  ')}  ${field.name}: ${tsType(field.type)}`,
    )
    declare(`Gql${type.name}`, interfaceDeclaration(`Gql${type.name}`, type.description, members))
    for (const field of fields) {
      if (field.args.length === 0) continue
      const name = argsName(type, field)
      declare(
        name,
        interfaceDeclaration(
          name,
          `Arguments of ${type.name}.${field.name}.`,
          field.args.map((arg) => inputMember(arg, '  ')),
        ),
      )
    }
  }

  const roots = rootTypes(schema).map(
    (root) =>
      `  ${root.name}: [${Object.keys(root.getFields())
        .map((name) => `'${name}'`)
        .join(', ')}],`,
  )
  declare(
    'rootFields',
    `/** The root fields of the schema, by root type, in schema order. */\nexport const rootFields = {\n${roots.join('\n')}\n} as const`,
  )

  const seen = new Set<string>()
  for (const { name } of declarations) {
    if (seen.has(name)) throw new Error(`codegen/graphql.ts: two declarations are named ${name}; rename a type or field in schema.graphql`)
    seen.add(name)
  }

  return `${banner('codegen/graphql.ts', 'schema.graphql')}\n${declarations.map((declaration) => declaration.code).join('\n\n')}\n`
}

export async function generateGraphqlFiles(root: string): Promise<GeneratedFile[]> {
  const sdl = await readFile(join(root, 'schema.graphql'), 'utf8')
  return [{ path: 'src/generated/graphql/types.ts', contents: generateGraphqlTypes(sdl) }]
}
