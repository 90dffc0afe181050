/**
 * Tracing's wrappers cost nothing while tracing is off: the schema Mercurius
 * executes holds the modules' own resolvers, and the loaders are batched unwrapped. With a span
 * exporter the same fields are wrapped (tracing.test.ts shows what the wrappers record).
 */
import t from 'tap'
import type { GraphQLSchema } from 'graphql'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base'
import { buildApp } from '../../src/app.ts'
import { tracedLoaders, tracedResolvers } from '../../src/graphql/observability.ts'
import { graphqlResolvers } from '../../src/modules/graphql-resolvers.ts'
import { orderResolvers } from '../../src/modules/orders/orders.resolvers.ts'
import { userResolvers } from '../../src/modules/users/users.resolvers.ts'
import { build, createTestDatabase, testConfig } from '../helper.ts'

function rootResolver(schema: GraphQLSchema, field: string): unknown {
  return schema.getQueryType()?.getFields()[field]?.resolve
}

t.test('tracing off: the root fields resolve with the modules’ own functions, and nothing wraps the loaders', async (t) => {
  const app = await build(t)
  t.equal(app.tracing, undefined, 'tracing is off by default')
  t.equal(rootResolver(app.graphql.schema, 'orders'), orderResolvers.Query?.orders, 'Query.orders is the module’s function')
  t.equal(rootResolver(app.graphql.schema, 'user'), userResolvers.Query?.user, 'Query.user is the module’s function')
  const { resolvers, loaders } = graphqlResolvers()
  t.equal(tracedResolvers(app, resolvers), resolvers, 'the resolvers as given')
  t.equal(tracedLoaders(app, loaders), loaders, 'the loaders as given')
})

t.test('tracing on: the same root fields are wrapped, so that their statements are spans under graphql.execute', async (t) => {
  const database = await createTestDatabase(t)
  const app = await buildApp({ config: testConfig({ EVENTS_RELAY: 'false' }), database, spanExporter: new InMemorySpanExporter() })
  t.teardown(() => app.close())
  t.ok(app.tracing, 'tracing is on')
  t.not(rootResolver(app.graphql.schema, 'orders'), orderResolvers.Query?.orders)
  const { loaders } = graphqlResolvers()
  t.not(tracedLoaders(app, loaders), loaders)
})
