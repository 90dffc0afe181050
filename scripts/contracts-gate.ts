/**
 * `npm run contracts:gate [-- --root <dir>]`: the breaking-change gate (decisions §13, "Contract evolution").
 *
 * Compares `openapi.yaml` and `schema.graphql` with the latest release kept in `contracts/releases/<version>/`
 * (a clean clone in CI may carry no tags, so the released contracts live in the repository). Every breaking
 * change must be listed in CHANGELOG.md under the top, unreleased section's `### Breaking` list, by its key in
 * backticks (see `changeKey` and "Contract evolution" in docs/contracts.md); the persisted documents in `operations/`
 * must validate against today's schema. Exit 0 when all holds, 1 with the reasons otherwise.
 *
 * Tools: graphql-inspector's `diff` for the SDL; api-smart-diff for OpenAPI, since it reads 3.1 documents
 * (type arrays, `examples`) and classifies each change as breaking or not with the JSON path where it happens
 * (openapi-diff reads only Swagger 2 and OpenAPI 3.0; Optic's CLI pulls in telemetry and a git/cloud workflow).
 */
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CriticalityLevel, diff as graphqlDiff, validate as validateDocuments } from '@graphql-inspector/core'
import { apiCompare } from 'api-smart-diff'
import { buildSchema, Source } from 'graphql'
import { parse as parseYaml } from 'yaml'

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

export type BreakingChange = { contract: 'openapi.yaml' | 'schema.graphql'; key: string; detail: string }

type OpenApiDocument = { paths?: Record<string, Record<string, unknown>>; webhooks?: Record<string, Record<string, unknown>> }

function parseArgs(argv: string[]): { root: string } {
  let root = join(dirname(fileURLToPath(import.meta.url)), '..')
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--root' && argv[i + 1]) root = resolve(argv[++i] as string)
    else throw new Error(`Unknown argument '${argv[i]}'. Usage: npm run contracts:gate [-- --root <dir>]`)
  }
  return { root }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0)
  return 0
}

/** The newest `contracts/releases/<x.y.z>/` directory. */
export async function latestRelease(root: string): Promise<string> {
  const entries = await readdir(join(root, 'contracts/releases'), { withFileTypes: true })
  const versions = entries.filter((e) => e.isDirectory() && /^\d+\.\d+\.\d+$/.test(e.name)).map((e) => e.name)
  const latest = versions.sort(compareVersions).at(-1)
  if (!latest) throw new Error('contracts/releases/ holds no release (a directory named x.y.z)')
  return latest
}

/**
 * The keys listed under the top section's `### Breaking` list of CHANGELOG.md: every `backticked` span in it.
 * The top section must be the unreleased one (`## x.y.z (unreleased)`); a released section is history.
 */
export function listedBreakingKeys(changelog: string): { section: string | null; keys: Set<string> } {
  const lines = changelog.split('\n')
  const top = lines.findIndex((line) => line.startsWith('## '))
  if (top === -1 || !/\(unreleased\)/i.test(lines[top] as string)) return { section: null, keys: new Set() }
  const keys = new Set<string>()
  let inBreaking = false
  for (const line of lines.slice(top + 1)) {
    if (line.startsWith('## ')) break
    if (line.startsWith('### ')) {
      inBreaking = /^###\s+Breaking\s*$/i.test(line)
      continue
    }
    if (inBreaking) for (const match of line.matchAll(/`([^`]+)`/g)) keys.add(normalizeKey(match[1] as string))
  }
  return { section: (lines[top] as string).slice(3).trim(), keys }
}

function normalizeKey(key: string): string {
  const trimmed = key.trim().replace(/\s+/g, ' ')
  const rest = /^([a-z]+) (\/.*)$/i.exec(trimmed)
  return rest && HTTP_METHODS.has((rest[1] as string).toLowerCase()) ? `${(rest[1] as string).toUpperCase()} ${rest[2]}` : trimmed
}

/**
 * A change is covered by a listed key equal to its own, or by a listed GraphQL coordinate it lies under
 * (`Order` covers `Order.id`, `Order.id` covers `Order.id.format`).
 */
export function isListed(change: BreakingChange, keys: Set<string>): boolean {
  if (keys.has(change.key)) return true
  if (change.contract !== 'schema.graphql') return false
  const parts = change.key.split('.')
  for (let i = parts.length - 1; i > 0; i--) if (keys.has(parts.slice(0, i).join('.'))) return true
  return false
}

/**
 * OpenAPI breaking changes, one per operation touched: `GET /orders/{id}` (or `webhook order.created`). Changes
 * found under `components` alone are reported where an operation uses them, so they are not counted twice.
 */
export function openApiBreakingChanges(before: OpenApiDocument, after: OpenApiDocument): BreakingChange[] {
  const { diffs } = apiCompare(before, after)
  const changes: BreakingChange[] = []
  for (const d of diffs) {
    const [section, name, method, ...rest] = d.path.map(String)
    if ((section !== 'paths' && section !== 'webhooks') || name === undefined) continue
    if (d.type !== 'breaking' && !(section === 'webhooks' && breaksWebhookReceivers(d))) continue
    const where = rest.filter(
      (part) => !/^\d+$/.test(part) && !['content', 'schema', 'properties', 'allOf', 'oneOf', 'anyOf', 'items'].includes(part),
    )
    const detail = `${d.description?.trim() || `${d.action} ${d.path.join('.')}`}${where.length > 0 ? ` (${where.join(' ')})` : ''}`
    // A removed path item, or a change to its shared parameters, touches every method under it.
    const item = (section === 'paths' ? before.paths : before.webhooks)?.[name] ?? {}
    const methods = method !== undefined && HTTP_METHODS.has(method) ? [method] : Object.keys(item).filter((m) => HTTP_METHODS.has(m))
    for (const m of methods) {
      const key = section === 'paths' ? `${m.toUpperCase()} ${name}` : `webhook ${name}`
      changes.push({ contract: 'openapi.yaml', key, detail })
    }
  }
  return dedupe(changes)
}

/** Keywords that document rather than constrain: changing them breaks nobody. */
const ANNOTATIONS = new Set(['description', 'summary', 'title', 'example', 'examples', 'externalDocs', 'deprecated', '$comment'])

/**
 * api-smart-diff leaves changes under `webhooks` unclassified. A webhook's receiver reads its payload as a
 * client reads a response, so removing or changing anything there (the webhook, a payload field, a
 * required entry, a type) is breaking, and an addition is not. Stricter than for responses (a narrowed
 * enum counts too): a receiver's parser is often generated and strict.
 */
function breaksWebhookReceivers(d: { type: string; action: string; path: readonly unknown[] }): boolean {
  if (d.type !== 'unclassified' || d.action === 'add') return false
  // `title` under `properties` is a payload field named title, not an annotation.
  return !d.path.some((part, i) => ANNOTATIONS.has(String(part)) && d.path[i - 1] !== 'properties')
}

export async function graphqlBreakingChanges(beforeSdl: string, afterSdl: string): Promise<BreakingChange[]> {
  const changes = await graphqlDiff(buildSchema(beforeSdl), buildSchema(afterSdl))
  return dedupe(
    changes
      .filter((change) => change.criticality.level === CriticalityLevel.Breaking)
      .map((change) => ({ contract: 'schema.graphql' as const, key: change.path ?? change.message, detail: change.message })),
  )
}

function dedupe(changes: BreakingChange[]): BreakingChange[] {
  const seen = new Set<string>()
  return changes.filter((change) => {
    const id = `${change.contract}\0${change.key}\0${change.detail}`
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}

/** Each persisted document validated against today's schema (deprecated fields are reported, not refused). */
async function persistedDocumentProblems(root: string, sdl: string): Promise<{ errors: string[]; deprecated: string[] }> {
  const dir = join(root, 'operations')
  const files = (await readdir(dir).catch(() => [] as string[])).filter((file) => file.endsWith('.graphql')).sort()
  const sources = await Promise.all(files.map(async (file) => new Source(await readFile(join(dir, file), 'utf8'), `operations/${file}`)))
  const invalid = validateDocuments(buildSchema(sdl), sources, { strictDeprecated: true })
  return {
    errors: invalid.flatMap((doc) => doc.errors.map((error) => `${doc.source.name}: ${error.message}`)),
    deprecated: invalid.flatMap((doc) => doc.deprecated.map((error) => `${doc.source.name}: ${error.message}`)),
  }
}

async function main(): Promise<number> {
  const { root } = parseArgs(process.argv.slice(2))
  const release = await latestRelease(root)
  const releaseDir = join(root, 'contracts/releases', release)
  const read = (path: string) => readFile(path, 'utf8')
  const [oldOpenApi, newOpenApi, oldSdl, newSdl, changelog, pkg] = await Promise.all([
    read(join(releaseDir, 'openapi.yaml')),
    read(join(root, 'openapi.yaml')),
    read(join(releaseDir, 'schema.graphql')),
    read(join(root, 'schema.graphql')),
    read(join(root, 'CHANGELOG.md')).catch(() => ''),
    read(join(root, 'package.json')),
  ])
  const failures: string[] = []

  // package.json names the latest release; releasing bumps both (docs/contracts.md, "Contract evolution").
  const version = (JSON.parse(pkg) as { version?: string }).version
  if (version !== release)
    failures.push(`package.json's version is ${version}, but the latest release in contracts/releases/ is ${release}`)

  const breaking = [
    ...openApiBreakingChanges(parseYaml(oldOpenApi) as OpenApiDocument, parseYaml(newOpenApi) as OpenApiDocument),
    ...(await graphqlBreakingChanges(oldSdl, newSdl)),
  ]
  const { section, keys } = listedBreakingKeys(changelog)
  const unlisted = breaking.filter((change) => !isListed(change, keys))
  if (unlisted.length > 0) {
    const byKey = new Map<string, BreakingChange[]>()
    for (const change of unlisted)
      byKey.set(`${change.contract}\0${change.key}`, [...(byKey.get(`${change.contract}\0${change.key}`) ?? []), change])
    const where = section ? `the "### Breaking" list of "## ${section}"` : 'an "## x.y.z (unreleased)" section at the top'
    failures.push(
      `${byKey.size} breaking change(s) since ${release} not listed in CHANGELOG.md under ${where}:\n` +
        [...byKey.values()]
          .map((group) => {
            const first = group[0] as BreakingChange
            const label = first.contract === 'schema.graphql' ? 'GraphQL' : first.key.startsWith('webhook ') ? 'Webhook' : 'REST'
            const details = [...new Set(group.map((change) => change.detail))].map((detail) => `      ${detail}`).join('\n')
            return `  - ${label} \`${first.key}\`: <what changed and how to migrate>\n${details}`
          })
          .join('\n'),
    )
  }

  const documents = await persistedDocumentProblems(root, newSdl)
  if (documents.errors.length > 0) failures.push(`persisted documents that today's schema refuses:\n  ${documents.errors.join('\n  ')}`)
  for (const note of documents.deprecated) console.warn(`contracts gate: note: ${note}`)

  if (failures.length > 0) {
    console.error(`contracts gate: FAILED against release ${release}\n${failures.join('\n')}`)
    return 1
  }
  console.log(
    `contracts gate: passed against release ${release}: ${breaking.length} breaking change(s), all listed in CHANGELOG.md; persisted documents valid`,
  )
  return 0
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = await main()
  } catch (error) {
    console.error(`contracts gate: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
