// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * docs/graphql.md says exactly what each GraphQL client cache needs (decisions §13, "GraphQL
 * clients"): for urql's Graphcache, a `keys` entry for every object type of schema.graphql that has
 * no `id` (Graphcache warns for each otherwise), and for Relay, a `customScalarTypes` entry for
 * every custom scalar. Read from the schema, so a new type without identity must be added there.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { buildSchema, GraphQLObjectType, GraphQLScalarType, isSpecifiedScalarType } from 'graphql'

const sdl = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8')
const docs = await readFile(new URL('../../docs/graphql.md', import.meta.url), 'utf8')
const schema = buildSchema(sdl)
const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((type) => type?.name))
const types = Object.values(schema.getTypeMap()).filter((type) => !type.name.startsWith('__'))

t.test("urql Graphcache: docs/graphql.md's `keys` names every object type without an id", async (t) => {
  const urql = /cacheExchange\(\{\s*keys: \{([^}]*)\}/.exec(docs)
  t.ok(urql, 'docs/graphql.md shows a cacheExchange({ keys }) configuration')
  const keyed = new Set([...(urql?.[1] ?? '').matchAll(/(\w+): embedded/g)].map((match) => match[1]))
  const withoutId = types.filter(
    (type): type is GraphQLObjectType => type instanceof GraphQLObjectType && !roots.has(type.name) && !('id' in type.getFields()),
  )
  t.ok(
    withoutId.some((type) => type.name === 'Item'),
    'Item is one of them',
  )
  for (const type of withoutId) t.ok(keyed.has(type.name), `${type.name} has no id: the docs embed it`)
})

t.test("Relay: docs/graphql.md's customScalarTypes types every custom scalar", async (t) => {
  const relay = /"customScalarTypes": \{([^}]*)\}/.exec(docs)
  t.ok(relay, 'docs/graphql.md shows a relay.config.json with customScalarTypes')
  const scalars = types.filter((type) => type instanceof GraphQLScalarType && !isSpecifiedScalarType(type))
  t.ok(scalars.length > 0)
  for (const scalar of scalars) t.match(relay?.[1] ?? '', new RegExp(`"${scalar.name}": "string"`), `${scalar.name} is typed`)
})
