/**
 * operations/*.graphql → src/generated/graphql/persisted-queries.json: the allow-list of persisted
 * queries, keyed by the SHA-256 of each document's exact text (the automatic persisted queries
 * protocol's hash). Every document must validate against schema.graphql.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildSchema, parse, validate } from 'graphql'
import type { GeneratedFile } from './generated-file.ts'

export async function generatePersistedQueryFiles(root: string): Promise<GeneratedFile[]> {
  const schema = buildSchema(await readFile(join(root, 'schema.graphql'), 'utf8'))
  const files = (await readdir(join(root, 'operations')).catch(() => [] as string[])).filter((name) => name.endsWith('.graphql')).sort()
  const manifest: Record<string, string> = {}
  for (const file of files) {
    const text = await readFile(join(root, 'operations', file), 'utf8')
    const errors = validate(schema, parse(text))
    if (errors.length > 0) throw new Error(`operations/${file} does not validate against schema.graphql: ${errors.map((e) => e.message).join('; ')}`)
    manifest[createHash('sha256').update(text, 'utf8').digest('hex')] = text
  }
  return [{ path: 'src/generated/graphql/persisted-queries.json', contents: `${JSON.stringify(manifest, null, 2)}\n` }]
}
