/**
 * Regenerates everything derived from the contracts. With `--check` it writes nothing and fails
 * when the committed output differs from what the contracts produce (CI's drift check).
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { GeneratedFile } from './generated-file.ts'
import { generateOpenApiFiles } from './openapi.ts'
import { generateGraphqlFiles } from './graphql.ts'
import { generateOpenApiClientFiles } from './openapi-client.ts'
import { generateRequiredScopesFiles } from './required-scopes.ts'
import { generateMcpFiles } from './mcp.ts'
import { generateIdempotencyKeyFiles } from './idempotency-key.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const generatedDir = join(root, 'src/generated')

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = join(dir, entry.name)
      return entry.isDirectory() ? listFiles(full) : Promise.resolve([full])
    }),
  )
  return nested.flat()
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check')
  const files: GeneratedFile[] = [
    ...(await generateOpenApiFiles(root)),
    ...(await generateGraphqlFiles(root)),
    ...(await generateOpenApiClientFiles(root)),
    ...(await generateRequiredScopesFiles(root)),
    ...(await generateMcpFiles(root)),
    ...(await generateIdempotencyKeyFiles(root)),
  ]
  const wanted = new Map(files.map((file) => [join(root, file.path), file.contents]))
  // Files under src/generated/ that no generator produces any more are stale too.
  const existing = (await listFiles(generatedDir)).filter((file) => !file.endsWith('README.md'))
  const stale = existing.filter((file) => !wanted.has(file))

  if (check) {
    const drift: string[] = stale.map((file) => `${relative(root, file)} (no longer generated)`)
    for (const [path, contents] of wanted) {
      const current = await readFile(path, 'utf8').catch(() => null)
      if (current !== contents) drift.push(relative(root, path))
    }
    if (drift.length > 0) {
      console.error(`codegen --check: generated files are stale; run \`npm run codegen\` and commit:\n  ${drift.join('\n  ')}`)
      process.exit(1)
    }
    console.log(`codegen --check: ${wanted.size} generated files are up to date`)
    return
  }

  for (const file of stale) await rm(file)
  for (const [path, contents] of wanted) {
    await mkdir(dirname(path), { recursive: true })
    const current = await readFile(path, 'utf8').catch(() => null)
    if (current !== contents) await writeFile(path, contents)
  }
  console.log(`codegen: wrote ${wanted.size} files`)
}

await main()
