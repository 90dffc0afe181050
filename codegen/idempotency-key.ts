/**
 * openapi.yaml → src/generated/openapi/idempotency-key.ts: what an idempotency key is, as the
 * contract's `IdempotencyKey` parameter says it (its schema, verbatim). The write pipeline checks a
 * key with it (src/db/write.ts), for a REST header and a GraphQL argument alike (decisions §7), so
 * the rule is written once, in the contract.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parse } from 'yaml'
import { banner, type GeneratedFile } from './generated-file.ts'
import { fail, isObject, type Json, resolve } from './openapi.ts'

const GENERATOR = 'codegen/idempotency-key.ts'
const SOURCE = 'openapi.yaml'
const WHERE = 'components.parameters.IdempotencyKey'

/** The generated file for a parsed document. Pure: the same document gives a byte-identical file. */
export function idempotencyKeyFileOf(document: Json): GeneratedFile {
  const parameter = resolve(
    document,
    resolve(document, document.components, 'components').parameters,
    'components.parameters',
  ).IdempotencyKey
  if (!isObject(parameter)) fail(WHERE, 'is missing')
  const schema = resolve(document, parameter.schema, `${WHERE}.schema`)
  if (typeof schema.minLength !== 'number' || typeof schema.maxLength !== 'number' || typeof schema.pattern !== 'string') {
    fail(`${WHERE}.schema`, 'needs minLength, maxLength and pattern (the key check reads all three)')
  }
  return {
    path: 'src/generated/openapi/idempotency-key.ts',
    contents: [
      banner(GENERATOR, SOURCE),
      `/** What an idempotency key is: openapi.yaml's \`IdempotencyKey\` parameter schema. */`,
      `export const IdempotencyKeySchema = ${JSON.stringify(schema, null, 2)} as const\n`,
    ].join('\n'),
  }
}

export async function generateIdempotencyKeyFiles(root: string): Promise<GeneratedFile[]> {
  return [idempotencyKeyFileOf(parse(await readFile(join(root, SOURCE), 'utf8')) as Json)]
}
