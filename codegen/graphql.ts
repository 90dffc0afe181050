/**
 * schema.graphql → src/generated/graphql/types.ts: the types and typed resolvers (@graphql-codegen's
 * typescript and typescript-resolvers; parents are the service records of src/modules/graphql-parents.ts,
 * the context is Mercurius'), and the root fields (a test asserts each is exercised).
 * operations/*.graphql → operations.ts: each document typed (typescript-operations), with its exact
 * text and SHA-256, the hash under which persisted-queries.json allow-lists it.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { codegen } from '@graphql-codegen/core'
import * as typescript from '@graphql-codegen/typescript'
import * as typescriptOperations from '@graphql-codegen/typescript-operations'
import * as typescriptResolvers from '@graphql-codegen/typescript-resolvers'
import { buildSchema, type DocumentNode, getOperationAST, isObjectType, parse, Source } from 'graphql'
import { banner, type GeneratedFile } from './generated-file.ts'

const pluginMap = { typescript, 'typescript-resolvers': typescriptResolvers, 'typescript-operations': typescriptOperations }
const TYPED_DOCUMENT = "import type { TypedDocument } from '../../graphql/typed-document.ts'"
const config = { enumsAsTypes: true, useTypeImports: true, scalars: { DateTime: 'string' } }

export async function generateGraphqlFiles(root: string): Promise<GeneratedFile[]> {
  const sdl = await readFile(join(root, 'schema.graphql'), 'utf8')
  const schema = buildSchema(sdl)
  const options = { filename: 'types.ts', schema: parse(sdl), config, pluginMap }
  const generate = (plugins: Array<Record<string, object>>, documents: DocumentNode[] = []) =>
    codegen({ ...options, plugins, documents: documents.map((document) => ({ document })) })
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) => (type ? [type] : []))
  const types = Object.values(schema.getTypeMap()).filter((type) => !type.name.startsWith('__'))
  const records = types.filter((type) => isObjectType(type) && !roots.includes(type))
  const resolversConfig = {
    // Records carry numeric ids; graphql-js serializes them as ID strings.
    scalars: { ...config.scalars, ID: { input: 'string', output: 'string | number' } },
    contextType: 'mercurius#MercuriusContext',
    makeResolverTypeCallable: true,
    // A Node's parent says which type it is (src/graphql/resolving/node.ts tags what node/nodes return).
    resolversNonOptionalTypename: { interfaceImplementingType: true },
    mappers: Object.fromEntries(records.map(({ name }) => [name, `../../modules/graphql-parents.ts#${name}Parent`])),
  }
  const rootFields = roots.map((type) => `  ${type.name}: ${JSON.stringify(Object.keys(type.getFields()))},`).join('\n')
  const typed = await generate([{ typescript: resolversConfig }, { 'typescript-resolvers': resolversConfig }])

  const files = (await readdir(join(root, 'operations'))).filter((name) => name.endsWith('.graphql')).sort()
  const queries = await Promise.all(files.map((file) => readFile(join(root, 'operations', file), 'utf8')))
  const hashes = queries.map((query) => createHash('sha256').update(query, 'utf8').digest('hex'))
  const documents = queries.map((query, index) => parse(new Source(query, `operations/${files[index]}`)))
  const typedDocuments = documents.map((document, index) => {
    const operation = getOperationAST(document)
    if (!operation?.name) throw new Error(`operations/${files[index]}: one named operation per file, so that its hash names it`)
    const [operationName, kind] = [operation.name.value, operation.operation]
    const type = `${operationName}${kind.charAt(0).toUpperCase()}${kind.slice(1)}`
    const value = JSON.stringify({ operationName, sha256Hash: hashes[index], query: queries[index] }, null, 2)
    return `export const ${operationName}Document: TypedDocument<${type}, ${type}Variables> = ${value}`
  })
  // typescript-operations validates every document against the schema, and refuses one that fails.
  const operations = await generate([{ 'typescript-operations': {} }], documents)
  const file = (name: string, source: string, contents: string) => ({
    path: `src/generated/graphql/${name}`,
    contents: `${name.endsWith('.ts') ? banner('codegen/graphql.ts', source) : ''}${contents}\n`,
  })
  return [
    file(
      'types.ts',
      'schema.graphql',
      `\n${typed}\n/** The root fields of the schema, by root type. */\nexport const rootFields = {\n${rootFields}\n} as const`,
    ),
    file('operations.ts', 'operations/*.graphql', [TYPED_DOCUMENT, operations, ...typedDocuments].join('\n\n')),
    file('persisted-queries.json', '', JSON.stringify(Object.fromEntries(hashes.map((hash, index) => [hash, queries[index]])), null, 2)),
  ]
}
