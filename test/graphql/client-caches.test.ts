/**
 * Normalized GraphQL client caches work with no configuration (decisions §13, "GraphQL clients"):
 * every type with an identity, an order's line item included, has an `id`, so urql's Graphcache
 * with no `keys` stays quiet (it embeds connections, edges and PageInfo by itself) and Apollo
 * Client's default InMemoryCache keys an item `Item:<id>`, both over real HTTP against the service.
 * Without `id` in an item's selection Graphcache does warn: the check can fail. Relay is
 * test/graphql/relay.test.ts.
 */
import t from 'tap'
import { ApolloClient, HttpLink, InMemoryCache, gql as apolloGql } from '@apollo/client'
import { Client, fetchExchange, gql as urqlGql } from '@urql/core'
import { cacheExchange } from '@urql/exchange-graphcache'
import { bearer, build } from '../helper.ts'
import { toGlobalId } from '../../src/graphql/resolving/global-id.ts'

const ORDERS = `
  query Orders {
    ordersConnection(first: 2) {
      edges { cursor node { id status items { id sku qty product { id name } } } }
      pageInfo { hasNextPage endCursor }
    }
  }
`

/** What a library prints with console.warn and console.error while `work` runs. */
async function complaintsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const complaints: string[] = []
  const { warn, error } = console
  console.warn = (...args: unknown[]) => void complaints.push(args.map(String).join(' '))
  console.error = console.warn
  try {
    await work()
  } finally {
    Object.assign(console, { warn, error })
  }
  return complaints
}

t.test('urql Graphcache and Apollo Client cache orders and their items with no configuration, and say nothing', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  const url = `http://127.0.0.1:${address.port}/graphql`
  const grace = bearer(2, 'orders:read')
  const firstItem = toGlobalId('Item', { orderId: 3, position: 0 })

  const urql = new Client({ url, exchanges: [cacheExchange({}), fetchExchange], fetchOptions: { headers: grace } })
  const urqlComplaints = await complaintsDuring(async () => {
    const fetched = await urql.query(urqlGql(ORDERS), {}).toPromise()
    t.notOk(fetched.error, 'urql: no error')
    t.match(fetched.data?.ordersConnection.edges[0].node.items[0], { id: firstItem, sku: 'KB-101' })
    const cached = await urql.query(urqlGql(ORDERS), {}, { requestPolicy: 'cache-only' }).toPromise()
    t.same(cached.data, fetched.data, 'urql: the same answer, read back from its normalized cache')
  })
  t.same(urqlComplaints, [], 'urql Graphcache with no keys: no warning')

  // The check sees a warning when there is one: an item selected without its id.
  const keyless = new Client({ url, exchanges: [cacheExchange({}), fetchExchange], fetchOptions: { headers: grace } })
  const keylessComplaints = await complaintsDuring(() =>
    keyless.query(urqlGql('{ ordersConnection(first: 1) { edges { node { id items { sku } } } } }'), {}).toPromise(),
  )
  t.match(keylessComplaints.join('\n'), /Invalid key[\s\S]*`Item`/, 'urql warns for an item selected without its id')

  const apollo = new ApolloClient({ link: new HttpLink({ uri: url, headers: grace }), cache: new InMemoryCache() })
  const apolloComplaints = await complaintsDuring(async () => {
    const { data } = await apollo.query({ query: apolloGql(ORDERS) })
    t.match(data, { ordersConnection: { edges: [{ node: { id: toGlobalId('Order', 3), items: [{ id: firstItem }, {}] } }, {}] } })
    const cache = apollo.cache.extract() as Record<string, { sku?: string }>
    t.equal(cache[`Item:${firstItem}`]?.sku, 'KB-101', 'Apollo: an item is a record of its own, keyed Item:<id>')
    t.ok(cache[`Order:${toGlobalId('Order', 3)}`], 'Apollo: the order, keyed Order:<id>')
  })
  t.same(apolloComplaints, [], 'Apollo Client with its default cache: no warning')
})
