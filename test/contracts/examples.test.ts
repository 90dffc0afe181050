// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * Examples everywhere (decisions §13, "Contract evolution"): every operation of openapi.yaml, under
 * `paths` and `webhooks` alike, whoever added it, has an example for each request media type and for
 * each documented response that has a body, and every example (those of schemas too) validates against
 * its own schema. Mock servers (Prism) and the docs page show these examples.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { contractSchemaErrors } from '../contract-validator.ts'

type Json = Record<string, unknown>
type MediaType = { schema?: unknown; example?: unknown; examples?: Record<string, Json> }
type WithContent = { content?: Record<string, MediaType> }
type Operation = { operationId?: string; requestBody?: WithContent; responses?: Record<string, WithContent> }

const document = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  paths?: Record<string, Record<string, Operation>>
  webhooks?: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, Json> }
}
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** A local `$ref` (`#/components/…`) followed to what it names. */
function resolve<T>(value: T): T {
  let current: unknown = value
  while (current && typeof current === 'object' && typeof (current as { $ref?: unknown }).$ref === 'string') {
    const ref = (current as { $ref: string }).$ref
    current = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Json | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document)
    if (current === undefined) throw new Error(`unresolved $ref ${ref}`)
  }
  return current as T
}

/** A media type's examples: `example`, or each of `examples` (an Example Object's `value`, `$ref`s followed). */
function examplesOf(media: MediaType): unknown[] {
  if (media.example !== undefined) return [media.example]
  return Object.values(media.examples ?? {})
    .map((example) => resolve(example).value)
    .filter((value) => value !== undefined)
}

const operations = [
  ...Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path} (${operation.operationId})`, operation })),
  ),
  ...Object.entries(document.webhooks ?? {}).flatMap(([hook, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, operation]) => ({ name: `webhook ${hook} ${method.toUpperCase()}`, operation })),
  ),
]

t.ok(operations.length > 0, 'the contract has operations')

for (const { name, operation } of operations) {
  t.test(name, async (t) => {
    const parts: Array<[string, WithContent]> = []
    if (operation.requestBody) parts.push(['request', resolve(operation.requestBody)])
    for (const [status, response] of Object.entries(operation.responses ?? {})) parts.push([`response ${status}`, resolve(response)])
    for (const [part, withContent] of parts) {
      for (const [mediaType, media] of Object.entries(withContent.content ?? {})) {
        const examples = examplesOf(media)
        t.ok(examples.length > 0, `${part} ${mediaType} has an example`)
        for (const example of examples) {
          const errors = media.schema === undefined ? undefined : contractSchemaErrors(media.schema, example)
          t.equal(errors, undefined, `${part} ${mediaType}: its example matches its schema`)
        }
      }
    }
  })
}

/** Every `examples` array of a schema, with the schema it belongs to, in components and below. */
function* schemaExamples(schema: unknown, where: string): Generator<[string, unknown, unknown]> {
  if (!schema || typeof schema !== 'object') return
  const node = schema as Json
  if (Array.isArray(node.examples)) for (const [i, example] of node.examples.entries()) yield [`${where} examples[${i}]`, schema, example]
  for (const [key, value] of Object.entries(node)) {
    if (key === 'examples' || key === 'example') continue
    if (key === 'properties' && value && typeof value === 'object') {
      for (const [property, inner] of Object.entries(value)) yield* schemaExamples(inner, `${where}.${property}`)
    } else if (Array.isArray(value)) {
      for (const [i, inner] of value.entries()) yield* schemaExamples(inner, `${where}.${key}[${i}]`)
    } else if (value && typeof value === 'object') yield* schemaExamples(value, `${where}.${key}`)
  }
}

t.test("every schema's own examples match it", async (t) => {
  let count = 0
  for (const [schemaName, schema] of Object.entries(document.components?.schemas ?? {})) {
    for (const [where, owner, example] of schemaExamples(schema, schemaName)) {
      count++
      t.equal(contractSchemaErrors(owner, example), undefined, where)
    }
  }
  t.ok(count > 0, 'the schemas carry examples')
})
