/**
 * Imports point one way (docs/layout.md, "Imports point one way"): the layers of src/ are listed
 * there, top to bottom, and a file may import its own layer and the layers below it, never one
 * above. The order is read from the document itself, so the rule and its description cannot drift
 * apart; every file of src/ must belong to exactly one layer, so a new folder has to be placed.
 * Every kind of import counts (static, type-only, re-exports, dynamic): a type-only import still
 * ties a layer to the one it names. The one exception is what codegen writes: src/generated/ may
 * name, type-only, the files codegen/graphql.ts points it at (the parents and the typed document).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const src = join(root, 'src')

interface Layer {
  name: string
  /** Folders (ending in /) and files, relative to src/. */
  members: string[]
}

/** The layers of docs/layout.md's "Imports point one way" section, top first. */
export function layersOf(layout: string): Layer[] {
  const section = layout.split(/^## Imports point one way$/m)[1]?.split(/^## /m)[0] ?? ''
  const block = /```text\n([\s\S]*?)\n```/.exec(section)?.[1] ?? ''
  return block
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((words) => words.length > 1 && words[0] !== '')
    .map(([name, ...members]) => ({ name: name!, members }))
}

/** The index of the layer a path (relative to src/) belongs to, or the layers it matches if not exactly one. */
function layerIndex(layers: Layer[], path: string): number | number[] {
  const matches = layers.flatMap((layer, index) =>
    layer.members.some((member) => (member.endsWith('/') ? path.startsWith(member) : path === member)) ? [index] : [],
  )
  return matches.length === 1 ? matches[0]! : matches
}

/** The files of ours a file's text imports (every form), relative to src/, each with whether it is an `import type`. */
export function importsOf(path: string, text: string): Array<{ target: string; typeOnly: boolean }> {
  const typeOnly = new Set([...text.matchAll(/^import type [^;]*? from '([^']+)'/gm)].map((match) => match[1]))
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => ({
      target: relative(src, resolve(dirname(join(src, path)), specifier)),
      typeOnly: typeOnly.has(specifier),
    }))
}

/** Every import that points up, as "importer (layer) imports target (layer)"; and every file in no single layer. */
export function againstTheOrder(layers: Layer[], files: Map<string, string>): { upward: string[]; unplaced: string[] } {
  const upward: string[] = []
  const unplaced: string[] = []
  for (const [path, text] of files) {
    const from = layerIndex(layers, path)
    if (typeof from !== 'number') {
      unplaced.push(`${path} is in ${from.length === 0 ? 'no layer' : `${from.length} layers`}`)
      continue
    }
    for (const { target, typeOnly } of importsOf(path, text)) {
      const to = layerIndex(layers, target)
      if (typeof to !== 'number') {
        unplaced.push(`${target} (imported by ${path}) is in no single layer`)
        continue
      }
      // Index 0 is the top: an import points up when its target's layer is listed above.
      if (to >= from) continue
      if (path.startsWith('generated/') && typeOnly) continue
      upward.push(`src/${path} (${layers[from]!.name}) imports src/${target} (${layers[to]!.name})`)
    }
  }
  return { upward, unplaced }
}

const layout = readFileSync(join(root, 'docs/layout.md'), 'utf8')
const layers = layersOf(layout)
const sources = new Map(
  readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => [name, readFileSync(join(src, name), 'utf8')] as const),
)

t.test('every import in src/ points down the layers of docs/layout.md, or stays in its own', async (t) => {
  t.ok(layers.length >= 8, `docs/layout.md lists ${layers.length} layers`)
  t.ok(sources.size > 150, `${sources.size} files read`)
  const { upward, unplaced } = againstTheOrder(layers, sources)
  t.same(unplaced, [], 'every file of src/ is in exactly one layer')
  t.same(upward, [], upward.join('\n'))
})

t.test('every member of a layer exists: the layout names nothing that is gone', async (t) => {
  const members = layers.flatMap((layer) => layer.members)
  const stale = members.filter((member) =>
    member.endsWith('/') ? ![...sources.keys()].some((path) => path.startsWith(member)) : !sources.has(member),
  )
  t.same(stale, [], 'every member of a layer exists in src/')
})

t.test('the check is not vacuous: an import against the order is found, a type-only one from generated/ is not', async (t) => {
  const order = layersOf('## Imports point one way\n```text\ntop      a/\nmiddle   b/  c.ts\nbottom   generated/\n```\n')
  t.same(
    order.map((layer) => layer.name),
    ['top', 'middle', 'bottom'],
  )
  const files = new Map([
    ['a/one.ts', "import { x } from '../b/two.ts'\n"],
    ['b/two.ts', "import { y } from '../c.ts'\nexport { z } from '../generated/g.ts'\n"],
    ['c.ts', "const lazy = await import('./a/one.ts')\n"],
    ['generated/g.ts', "import type { T } from '../b/two.ts'\nimport { v } from '../a/one.ts'\n"],
    ['d.ts', ''],
  ])
  t.same(againstTheOrder(order, files), {
    upward: ['src/c.ts (middle) imports src/a/one.ts (top)', 'src/generated/g.ts (bottom) imports src/a/one.ts (top)'],
    unplaced: ['d.ts is in no layer'],
  })
})
