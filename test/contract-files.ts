/**
 * openapi.yaml and schema.graphql as the tests read them. A YAML parse of openapi.yaml costs a test
 * process 0.3-0.5 s of CPU, and every test file is a process of its own (about 300 per CI run), so
 * the parsed document is kept as JSON under node_modules/.cache, keyed by a hash of the text: an
 * edited openapi.yaml is parsed again, and what a test reads is always the file as it is.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { type Contracts, findProjectRoot } from '../src/contract/contracts.ts'

const root = findProjectRoot()
const cacheDirectory = join(root, 'node_modules/.cache/contract-api-tests')

/** openapi.yaml's text parsed, a fresh object on every call (the app and the contract checks each own theirs). */
export function parseOpenApi(text: string): Record<string, unknown> {
  const cached = join(cacheDirectory, `openapi-${createHash('sha256').update(text).digest('hex').slice(0, 32)}.json`)
  try {
    return JSON.parse(readFileSync(cached, 'utf8')) as Record<string, unknown>
  } catch {
    const document = parse(text) as Record<string, unknown>
    // Written whole or not at all: test processes running side by side may write it at once.
    mkdirSync(cacheDirectory, { recursive: true })
    const partial = `${cached}.${process.pid}`
    writeFileSync(partial, JSON.stringify(document))
    renameSync(partial, cached)
    return document
  }
}

/** The contracts as they are on disk, for buildApp (which only reads them). */
export function contractsOnDisk(): Contracts {
  const openApiYaml = readFileSync(join(root, 'openapi.yaml'), 'utf8')
  return {
    openApiYaml,
    openApiDocument: parseOpenApi(openApiYaml),
    graphqlSdl: readFileSync(join(root, 'schema.graphql'), 'utf8'),
  }
}
