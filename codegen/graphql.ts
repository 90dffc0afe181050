/**
 * schema.graphql → src/generated/graphql/types.ts: TypeScript types for every enum, input,
 * object type and field argument, and the list of root fields (a test asserts each has a resolver).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  buildSchema,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql'
import { banner, type GeneratedFile } from './generated-file.ts'

const SCALARS: Record<string, string> = { ID: 'string', String: 'string', Int: 'number', Float: 'number', Boolean: 'boolean' }

function typeName(type: GraphQLInputType | GraphQLOutputType, prefix: string): string {
  if (type instanceof GraphQLNonNull) return typeName(type.ofType, prefix).replace(/ \| null$/, '')
  let inner: string
  if (type instanceof GraphQLList) inner = `Array<${typeName(type.ofType, prefix)}>`
  else if (type instanceof GraphQLScalarType) inner = `Scalars['${type.name}']`
  else if (type instanceof GraphQLEnumType || type instanceof GraphQLInputObjectType) inner = type.name
  else inner = `${prefix}${type.name}`
  return `${inner} | null`
}

const optional = (type: GraphQLInputType) => !(type instanceof GraphQLNonNull)

function argsInterface(name: string, args: readonly GraphQLArgument[]): string {
  const lines = args.map((arg) => {
    // An argument with a default always reaches the resolver.
    const maybe = optional(arg.type) && arg.defaultValue === undefined
    const type = arg.defaultValue === undefined ? typeName(arg.type, 'Gql') : typeName(arg.type, 'Gql').replace(/ \| null$/, '')
    return `  ${arg.name}${maybe ? '?' : ''}: ${type}${maybe ? ' | undefined' : ''}`
  })
  return `export interface ${name} {\n${lines.join('\n')}\n}`
}

export function generateGraphqlTypes(sdl: string): string {
  const schema = buildSchema(sdl)
  const types = Object.values(schema.getTypeMap())
    .filter((type) => !type.name.startsWith('__'))
    .sort((a, b) => a.name.localeCompare(b.name))
  const out: string[] = [banner('codegen/graphql.ts', 'schema.graphql')]
  const scalars = types.filter((type): type is GraphQLScalarType => type instanceof GraphQLScalarType)
  out.push(
    `export interface Scalars {\n${scalars.map((scalar) => `  ${scalar.name}: ${SCALARS[scalar.name] ?? 'string'}`).join('\n')}\n}`,
  )
  for (const type of types) {
    if (type instanceof GraphQLEnumType) {
      const values = type.getValues().map((value) => value.name)
      const constName = `${type.name.charAt(0).toLowerCase()}${type.name.slice(1)}Values`
      out.push(`export type ${type.name} = ${values.map((value) => `'${value}'`).join(' | ')}`)
      out.push(`export const ${constName} = [${values.map((value) => `'${value}'`).join(', ')}] as const`)
    } else if (type instanceof GraphQLInputObjectType) {
      const fields = Object.values(type.getFields()).map((field) => {
        const maybe = optional(field.type)
        return `  ${field.name}${maybe ? '?' : ''}: ${typeName(field.type, 'Gql')}${maybe ? ' | undefined' : ''}`
      })
      out.push(`export interface ${type.name} {\n${fields.join('\n')}\n}`)
    } else if (type instanceof GraphQLObjectType) {
      const fields = Object.values(type.getFields())
      out.push(`export interface Gql${type.name} {\n${fields.map((field) => `  ${field.name}: ${typeName(field.type, 'Gql')}`).join('\n')}\n}`)
      for (const field of fields) {
        if (field.args.length > 0) out.push(argsInterface(`${type.name}${field.name.charAt(0).toUpperCase()}${field.name.slice(1)}Args`, field.args))
      }
    }
  }
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(
    (root): root is GraphQLObjectType => root !== null && root !== undefined,
  )
  out.push(
    `/** The root fields of the schema, by operation type. */\nexport const rootFields = {\n${roots
      .map((root) => `  ${root.name}: [${Object.keys(root.getFields()).map((name) => `'${name}'`).join(', ')}],`)
      .join('\n')}\n} as const`,
  )
  return out.join('\n\n') + '\n'
}

export async function generateGraphqlFiles(root: string): Promise<GeneratedFile[]> {
  const sdl = await readFile(join(root, 'schema.graphql'), 'utf8')
  return [{ path: 'src/generated/graphql/types.ts', contents: generateGraphqlTypes(sdl) }]
}
