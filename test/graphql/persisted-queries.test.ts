import t from 'tap'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { bearer, build, gql } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } })

t.test('automatic persisted queries: an unknown hash asks for the query once, then the hash alone works', async (t) => {
  const app = await build(t)
  const query = '{ me { name } }'
  const first = await gql(app, { extensions: persisted(sha256(query)) }, grace)
  t.equal(first.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_FOUND')
  const register = await gql(app, { query, extensions: persisted(sha256(query)) }, grace)
  t.same(register.json().data, { me: { name: 'Grace Hopper' } })
  const byHash = await gql(app, { extensions: persisted(sha256(query)) }, grace)
  t.same(byHash.json().data, { me: { name: 'Grace Hopper' } })
  const mismatch = await gql(app, { query, extensions: persisted(sha256('{ other }')) }, grace)
  t.ok(mismatch.json().errors, 'a hash that does not match its query is refused')
})

t.test("GRAPHQL_PERSISTED_ONLY executes only the manifest's documents", async (t) => {
  const app = await build(t, { env: { GRAPHQL_PERSISTED_ONLY: 'true' } })
  const listed = await readFile(new URL('../../operations/UserWithRecentOrders.graphql', import.meta.url), 'utf8')
  const ok = await gql(app, { extensions: persisted(sha256(listed)), variables: { id: '2', last: 1 } }, grace)
  t.same(ok.json().data.user.orders.length, 1)
  const adHoc = await gql(app, '{ me { name } }', grace)
  t.equal(adHoc.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_ALLOWED')
  const unlisted = await gql(app, { query: '{ me { name } }', extensions: persisted(sha256('{ me { name } }')) }, grace)
  t.equal(unlisted.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_ALLOWED')
})
