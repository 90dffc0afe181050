// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * Three lists of the configuration must agree: the table of docs/configuration.md, the
 * variables src/config.ts reads, and .env.example. And .env.example's values are the defaults:
 * uncommented, they configure exactly what no variable at all does.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const read = (path: string) => readFile(join(root, path), 'utf8')
const sorted = (names: Iterable<string>) => [...new Set(names)].sort()

/** The variables the table of docs/configuration.md names (its "## Variables" section). */
function documentedVariables(document: string): string[] {
  const section = document.split(/^## Variables$/m)[1]?.split(/^## /m)[0]
  if (!section) throw new Error('docs/configuration.md has no "## Variables" section')
  const rows = section.split('\n').filter((line) => line.startsWith('| `'))
  return sorted(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!)))
}

function configVariables(source: string): string[] {
  return sorted(
    [...source.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|, '([A-Z][A-Z0-9_]*)'|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g)].map(
      (match) => match[1] ?? match[2] ?? match[3]!,
    ),
  )
}

function exampleEntries(example: string): Array<[string, string]> {
  return example
    .split('\n')
    .map((line) => /^#?\s?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => [match[1]!, match[2]!.trim()])
}

t.test('the table of docs/configuration.md, src/config.ts and .env.example name the same variables', async (t) => {
  const fromDocs = documentedVariables(await read('docs/configuration.md'))
  const fromConfig = configVariables(await read('src/config.ts'))
  const fromExample = sorted(exampleEntries(await read('.env.example')).map(([name]) => name))
  t.ok(fromConfig.length >= 25, `config.ts reads ${fromConfig.length} variables`)
  t.same(fromDocs, fromConfig, 'docs/configuration.md table = variables config.ts reads')
  t.same(fromExample, fromConfig, '.env.example = variables config.ts reads')
})

t.test('.env.example shows the defaults: with every value uncommented the configuration is the default one', async (t) => {
  const env = Object.fromEntries(exampleEntries(await read('.env.example')).filter(([, value]) => value !== ''))
  t.ok(Object.keys(env).length > 20)
  t.same(loadConfig(env), loadConfig({}))
})

t.test('the comparison is not vacuous: a variable missing from one list is seen', async (t) => {
  const document =
    '## Variables\n\n| Variable | Default | Meaning |\n|---|---|---|\n| `HOST`, `PORT` | x | y |\n\n## Next\n| `NOT_CONFIG` | |\n'
  t.same(documentedVariables(document), ['HOST', 'PORT'])
  t.same(configVariables("env.HOST || integer(env, 'PORT', 3000) env['X_Y']"), ['HOST', 'PORT', 'X_Y'])
  t.same(exampleEntries('# A=1\nB=\n# not a variable\n'), [
    ['A', '1'],
    ['B', ''],
  ])
})
