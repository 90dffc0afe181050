/**
 * The two contract files, read once at start-up. They are found by walking up from this module,
 * so the same code works from src/ (tsx) and from a compiled dist/src/.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

/** The directory of openapi.yaml: the project root, from src/ or a compiled dist/src/ alike. */
export function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'openapi.yaml'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`openapi.yaml not found above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
  return dir
}

export interface Contracts {
  openApiYaml: string
  openApiDocument: Record<string, unknown>
  graphqlSdl: string
}

export function loadContracts(root: string = findProjectRoot()): Contracts {
  const openApiYaml = readFileSync(join(root, 'openapi.yaml'), 'utf8')
  return {
    openApiYaml,
    openApiDocument: parse(openApiYaml) as Record<string, unknown>,
    graphqlSdl: readFileSync(join(root, 'schema.graphql'), 'utf8'),
  }
}
