// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * docs/graphql.md says exactly what each GraphQL client cache needs (decisions §13, "GraphQL
 * clients"): for urql's Graphcache nothing, since every object type of schema.graphql without an
 * `id` is one Graphcache embeds by itself (it warns for any other), and for Relay, a
 * `customScalarTypes` entry for every custom scalar. Read from the schema, so a new type without
 * an identity must be one of those, or be added to the docs with its setting.
 * test/graphql/client-caches.test.ts runs urql and Apollo against the service.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { buildSchema, GraphQLObjectType, GraphQLScalarType, isSpecifiedScalarType } from 'graphql'

const sdl = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8')
const docs = await readFile(new URL('../../docs/graphql.md', import.meta.url), 'utf8')
const schema = buildSchema(sdl)
const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((type) => type?.name))
const types = Object.values(schema.getTypeMap()).filter((type) => !type.name.startsWith('__'))

/** The types Graphcache never asks a key of (its KEYLESS_TYPE_RE, @urql/exchange-graphcache's write.ts). */
const EMBEDDED_BY_GRAPHCACHE = /^__|PageInfo|(Connection|Edge)$/

t.test('urql Graphcache needs no keys: every object type without an id is one it embeds by itself', async (t) => {
  const withoutId = types.filter(
    (type): type is GraphQLObjectType => type instanceof GraphQLObjectType && !roots.has(type.name) && !('id' in type.getFields()),
  )
  t.ok(withoutId.length > 0, 'connections, edges and page info have no id')
  for (const type of withoutId) t.match(type.name, EMBEDDED_BY_GRAPHCACHE, `${type.name} has no id: Graphcache embeds it`)
  const item = schema.getType('Item')
  t.ok(item instanceof GraphQLObjectType && 'id' in item.getFields(), "an order's line item has an id")
  t.notMatch(docs, /cacheExchange\(\{\s*keys:/, 'docs/graphql.md gives urql no keys to configure')
  t.match(docs, /\*\*urql Graphcache\*\* \(`cacheExchange\(\{\}\)`\): nothing/)
})

t.test("Relay: docs/graphql.md's customScalarTypes types every custom scalar", async (t) => {
  const relay = /"customScalarTypes": \{([^}]*)\}/.exec(docs)
  t.ok(relay, 'docs/graphql.md shows a relay.config.json with customScalarTypes')
  const scalars = types.filter((type) => type instanceof GraphQLScalarType && !isSpecifiedScalarType(type))
  t.ok(scalars.length > 0)
  for (const scalar of scalars) t.match(relay?.[1] ?? '', new RegExp(`"${scalar.name}": "string"`), `${scalar.name} is typed`)
})
