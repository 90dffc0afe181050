import t from 'tap'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { bearer, build } from '../helper.ts'

const grace = bearer(2, 'orders:read orders:write')
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } })

t.test('automatic persisted queries: an unknown hash asks for the query once, then the hash alone works', async (t) => {
  const app = await build(t)
  const query = '{ me { name } }'
  const first = await app.inject({ method: 'POST', url: '/graphql', headers: grace, payload: { extensions: persisted(sha256(query)) } })
  t.equal(first.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_FOUND')
  const register = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: grace,
    payload: { query, extensions: persisted(sha256(query)) },
  })
  t.same(register.json().data, { me: { name: 'Grace Hopper' } })
  const byHash = await app.inject({ method: 'POST', url: '/graphql', headers: grace, payload: { extensions: persisted(sha256(query)) } })
  t.same(byHash.json().data, { me: { name: 'Grace Hopper' } })
  const mismatch = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: grace,
    payload: { query, extensions: persisted(sha256('{ other }')) },
  })
  t.ok(mismatch.json().errors, 'a hash that does not match its query is refused')
})

t.test("GRAPHQL_PERSISTED_ONLY executes only the manifest's documents", async (t) => {
  const app = await build(t, { env: { GRAPHQL_PERSISTED_ONLY: 'true' } })
  const listed = await readFile(new URL('../../operations/UserWithRecentOrders.graphql', import.meta.url), 'utf8')
  const ok = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: grace,
    payload: { extensions: persisted(sha256(listed)), variables: { id: '2', last: 1 } },
  })
  t.same(ok.json().data.user.orders.length, 1)
  const adHoc = await app.inject({ method: 'POST', url: '/graphql', headers: grace, payload: { query: '{ me { name } }' } })
  t.equal(adHoc.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_ALLOWED')
  const unlisted = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: grace,
    payload: { query: '{ me { name } }', extensions: persisted(sha256('{ me { name } }')) },
  })
  t.equal(unlisted.json().errors[0].extensions.code, 'PERSISTED_QUERY_NOT_ALLOWED')
})
