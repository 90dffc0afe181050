// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The README is a map a newcomer can follow: under 300 lines, with a table of
 * contents that leads to its own headings; every relative link in it and in docs/ reaches a file
 * that exists, and an anchor reaches a heading of that file (GitHub's slugs); and docs/layout.md
 * names every folder of the repository and of src/ (src/modules/* included) and nothing that is gone.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const read = (path: string) => readFileSync(join(root, path), 'utf8')

/** The lines of a Markdown text outside fenced code blocks (a `# comment` in a shell block is no heading). */
export function proseLines(markdown: string): string[] {
  let fence: string | undefined
  const lines: string[] = []
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1]
    if (marker && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined
      continue
    }
    if (fence === undefined) lines.push(line)
  }
  return lines
}

/** GitHub's anchor for a heading text: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a document's headings; a repeated heading gets -1, -2… as on GitHub. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = slug(heading)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

/** The targets of a document's inline links `[text](target)`, outside code blocks and code spans. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = []
  for (const line of proseLines(markdown)) {
    const text = line.replace(/`[^`]*`/g, '')
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!)
  }
  return targets
}

/** What is wrong with each relative link of `file` (a path from the root): a missing file or anchor. */
export function brokenLinks(file: string, readText: (path: string) => string | undefined): string[] {
  const broken: string[] = []
  const text = readText(file) ?? ''
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
    const [path = '', anchor] = target.split('#', 2)
    const resolved = path === '' ? file : relative(root, join(root, dirname(file), decodeURIComponent(path)))
    // A link may name a folder too (GitHub lists it).
    if (resolved.startsWith('..') || (readText(resolved) === undefined && !existsSync(join(root, resolved)))) {
      broken.push(`${file}: ${target} (no ${resolved})`)
      continue
    }
    if (anchor === undefined || !resolved.endsWith('.md')) continue
    const linked = readText(resolved)
    if (linked !== undefined && !anchors(linked).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`)
  }
  return broken
}

const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
const readText = (path: string) => (existsSync(join(root, path)) && statSync(join(root, path)).isFile() ? read(path) : undefined)

t.test('README.md is under 300 lines', async (t) => {
  const lines = read('README.md').split('\n').length
  t.ok(lines < 300, `${lines} lines`)
})

t.test('the README has a table of contents that links to each of its sections, and only to its headings', async (t) => {
  const readme = read('README.md')
  const contents = readme.split(/^## Contents$/m)[1]?.split(/^## /m)[0]
  t.ok(contents, 'a "## Contents" section')
  const entries = linkTargets(contents ?? '')
  const headings = anchors(readme)
  t.ok(entries.length >= 5, `${entries.length} entries`)
  for (const entry of entries) t.ok(entry.startsWith('#') && headings.has(entry.slice(1)), `${entry} is a heading of the README`)
  const sections = proseLines(readme)
    .map((line) => /^## (.*)$/.exec(line)?.[1])
    .filter((heading): heading is string => heading !== undefined && heading !== 'Contents')
  t.same(
    sections.filter((heading) => !entries.includes(`#${slug(heading)}`)),
    [],
    'every section of the README is in its contents',
  )
})

t.test('every relative link of README.md and docs/*.md reaches a file, and its anchor a heading', async (t) => {
  t.ok(documents.length >= 8, `${documents.length} documents`)
  const links = documents.flatMap((file) => linkTargets(read(file)))
  t.ok(links.length >= 40, `${links.length} links`)
  t.same(
    documents.flatMap((file) => brokenLinks(file, readText)),
    [],
  )
})

/** The paths docs/layout.md names: the backticked paths in the first column of its table. */
export function layoutPaths(layout: string): string[] {
  return proseLines(layout)
    .map((line) => /^\|([^|]*)\|/.exec(line)?.[1] ?? '')
    .flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!))
}

t.test('docs/layout.md names every top-level folder, every folder of src/ and src/modules/, and nothing that does not exist', async (t) => {
  const named = layoutPaths(read('docs/layout.md')).map((path) => path.replace(/\/$/, ''))
  const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n')
  const topLevel = [...new Set(tracked.filter((path) => path.includes('/')).map((path) => path.split('/')[0]!))]
  const folders = (dir: string) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${dir}/${entry.name}`)
  const required = [...topLevel, ...folders('src'), ...folders('src/modules')]
  t.ok(required.length >= 20, `${required.length} folders`)
  t.same(
    required.filter((path) => !named.includes(path)),
    [],
    'every folder is in the layout',
  )
  t.same(
    named.filter((path) => !existsSync(join(root, path))),
    [],
    'the layout names nothing that does not exist',
  )
})

t.test('the checks are not vacuous', async (t) => {
  t.equal(slug('Browsers: docs, GraphiQL and CORS'), 'browsers-docs-graphiql-and-cors')
  t.equal(slug('§12 Hardening: faults, hostile input, browsers'), '12-hardening-faults-hostile-input-browsers')
  t.equal(slug('`GET /orders` and [a link](x.md)'), 'get-orders-and-a-link')
  t.same([...anchors('# A\n```sh\n# not a heading\n```\n## B\n## B\n')], ['a', 'b', 'b-1'])
  t.same(linkTargets('[a](x.md) `[b](y.md)` <https://z> [c](https://w "t")\n```\n[d](v.md)\n```\n'), ['x.md', 'https://w'])
  const files: Record<string, string> = {
    'docs/a.md': '# A\n## Here\n[ok](#here) [gone](#there) [file](b.md#b) [missing](c.md) [up](../README.md) [out](../../x.md)\n',
    'docs/b.md': '# B\n',
  }
  t.same(
    brokenLinks('docs/a.md', (path) => files[path] ?? readText(path)),
    ['docs/a.md: #there (no heading #there in docs/a.md)', 'docs/a.md: c.md (no docs/c.md)', 'docs/a.md: ../../x.md (no ../x.md)'],
  )
  t.same(layoutPaths('| Path | What |\n|---|---|\n| `src/a/`, `b.ts` | the `c/` folder |\n'), ['src/a/', 'b.ts'])
})
