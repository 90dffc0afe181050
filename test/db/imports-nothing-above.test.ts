// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * src/db/ is the bottom layer (README, Layout): the services, the transports and the plugins build
 * on it, so nothing in it may import them back. "Below or beside src/db" is, exactly:
 *   - src/db/ itself (the write path included: write.ts, repositories/);
 *   - src/generated/ (from the contracts; it imports nothing of ours by hand);
 *   - the two leaves every layer shares, which import nothing but src/generated/: contract/contract-types.ts
 *     (the contract's record types) and errors.ts (the error catalogue).
 * Everything else in src/ (modules/, http/, graphql/, plugins/, auth/, services.ts, config.ts, …)
 * is above. The rule is checked on everything src/db reaches, so a leaf that starts importing
 * upwards breaks it too. Packages (kysely, pg, node:*) are not ours and not checked.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const src = join(root, 'src')

const BELOW_OR_BESIDE: ReadonlyArray<(path: string) => boolean> = [
  (path) => path.startsWith('db/'),
  (path) => path.startsWith('generated/'),
  (path) => path === 'contract/contract-types.ts' || path === 'errors.ts',
]

const isBelowOrBeside = (path: string) => BELOW_OR_BESIDE.some((allowed) => allowed(path))

/** The files of ours a file imports (static, re-exports, type-only and dynamic alike), relative to src/. */
function importsOf(path: string): string[] {
  const text = readFileSync(join(src, path), 'utf8')
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => relative(src, resolve(dirname(join(src, path)), specifier)))
}

function filesUnder(folder: string): string[] {
  return readdirSync(join(src, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(folder, name))
}

/** Every file src/db reaches, each with the first file that imports it (for the message). */
function reachedFromDb(): Map<string, string | undefined> {
  const reached = new Map<string, string | undefined>(filesUnder('db').map((file) => [file, undefined]))
  const pending = [...reached.keys()]
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    // Files outside the allowed set are reported, not followed: one finding per upward edge.
    if (!isBelowOrBeside(file)) continue
    for (const imported of importsOf(file)) {
      if (reached.has(imported)) continue
      reached.set(imported, file)
      pending.push(imported)
    }
  }
  return reached
}

t.test('src/db imports nothing above it, directly or through what it imports', async (t) => {
  const reached = reachedFromDb()
  t.ok(reached.size > 20, `the walk found src/db's files (${reached.size} reached)`)
  const upward = [...reached].filter(([file]) => !isBelowOrBeside(file)).map(([file, importer]) => `src/${importer} imports src/${file}`)
  t.same(upward, [], upward.join('\n'))
})

t.test('the walk sees every kind of import it must judge', async (t) => {
  // The parser the rule relies on, on one file with each form: were one missed, an upward import
  // written that way would pass unseen.
  const forms = `
    import { a } from './a.ts'
    import type { B } from '../b.ts'
    import './c.ts'
    export { d } from '../../d.ts'
    export * from './e.ts'
    const f = await import('./f.ts')
    import {
      g,
    } from '../g.ts'
  `
  const specifiers = ts.preProcessFile(forms, true, true).importedFiles.map((file) => file.fileName)
  t.same(specifiers.sort(), ['../../d.ts', '../b.ts', '../g.ts', './a.ts', './c.ts', './e.ts', './f.ts'])
})
