/**
 * Users through the app, on both styles: a user record is that user's and the admins'; listing and
 * creating users is for admins; REST and GraphQL page the same list the same way.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, build, gql } from '../../helper.ts'
import { toGlobalId } from '../../../src/graphql/resolving/global-id.ts'

const ada = bearer(1, 'admin')
const grace = bearer(2, '')

async function graphql(app: FastifyInstance, headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) {
  const response = await gql(app, { query, variables }, headers)
  return response.json()
}

t.test('users: an admin pages through everyone by id, and both styles return the same pages', async (t) => {
  const app = await build(t)
  const first = await app.inject({ method: 'GET', url: '/api/v1/users?limit=3', headers: ada })
  t.equal(first.statusCode, 200)
  t.same(
    first.json().data.map((user: { id: number }) => user.id),
    [1, 2, 3],
  )
  t.equal(first.json().page.total, 4)
  const next = await app.inject({
    method: 'GET',
    url: `/api/v1/users?limit=3&cursor=${new URL(first.json().page.next).searchParams.get('cursor')}`,
    headers: ada,
  })
  t.same(
    next.json().data.map((user: { id: number; name: string }) => [user.id, user.name]),
    [[4, 'Katherine Johnson']],
  )
  t.equal(next.json().page.next, null, 'the last page has no next cursor')

  const connection = await graphql(app, ada, '{ usersConnection(first: 3) { edges { node { id } } pageInfo { hasNextPage endCursor } } }')
  t.same(
    connection.data.usersConnection.edges.map((edge: { node: { id: string } }) => edge.node.id),
    [1, 2, 3].map((id) => toGlobalId('User', id)),
  )
  t.equal(connection.data.usersConnection.pageInfo.hasNextPage, true)
  const rest = await app.inject({
    method: 'GET',
    url: `/api/v1/users?limit=3&cursor=${encodeURIComponent(connection.data.usersConnection.pageInfo.endCursor)}`,
    headers: ada,
  })
  t.same(
    rest.json().data.map((user: { id: number }) => user.id),
    [4],
    "a GraphQL cursor resumes REST's list",
  )

  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users', headers: grace })).statusCode, 403, 'not for a non-admin')
  t.equal((await graphql(app, grace, '{ users { id } }')).errors[0].extensions.code, 'FORBIDDEN')
})

t.test('users: a record is its owner’s and the admins’; whether another id exists is not told', async (t) => {
  const app = await build(t)
  const own = await app.inject({ method: 'GET', url: '/api/v1/users/2', headers: grace })
  t.equal(own.statusCode, 200)
  t.match(own.json(), { id: 2, name: 'Grace Hopper', company_id: 1 })
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/3', headers: grace })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/99', headers: grace })).statusCode, 403, 'not 404')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/users/99', headers: ada })).statusCode, 404)

  const me = await graphql(app, grace, '{ me { id name company { name } } other: user(id: 3) { id } }')
  t.same(me.data.me, { id: toGlobalId('User', 2), name: 'Grace Hopper', company: { name: 'Acme Corporation' } })
  t.equal(me.data.other, null)
  t.same(
    me.errors.map((error: { path: string[]; extensions: { code: string } }) => [error.path, error.extensions.code]),
    [[['other'], 'FORBIDDEN']],
  )
  t.same((await graphql(app, ada, '{ user(id: 99) { id } }')).data, { user: null }, 'an unknown user is null for an admin')
})

t.test('users: an admin creates users, in a company that exists, on both styles', async (t) => {
  const app = await build(t)
  const created = await app.inject({ method: 'POST', url: '/api/v1/users', headers: ada, payload: { name: 'Mary Jackson', company_id: 2 } })
  t.equal(created.statusCode, 201)
  const user = created.json()
  t.match(user, { name: 'Mary Jackson', company_id: 2 })
  t.equal(created.headers.location, `http://localhost:80/api/v1/users/${user.id}`)
  t.same((await app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: ada })).json(), user)

  const unknown = await app.inject({ method: 'POST', url: '/api/v1/users', headers: ada, payload: { name: 'Nobody', company_id: 9 } })
  t.equal(unknown.statusCode, 422)
  t.match(unknown.json(), { code: 'UNKNOWN_COMPANY', errors: [{ in: 'body', name: '/company_id' }] })
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/users', headers: grace, payload: { name: 'Sneaky' } })).statusCode, 403)

  const viaGraphql = await graphql(
    app,
    ada,
    'mutation ($input: CreateUserInput!) { createUser(input: $input) { id name company { name } } }',
    {
      input: { name: 'Dorothy Vaughan', companyId: '1' },
    },
  )
  t.match(viaGraphql.data.createUser, { name: 'Dorothy Vaughan', company: { name: 'Acme Corporation' } })
  const noCompany = await graphql(app, ada, 'mutation { createUser(input: { name: "Solo" }) { name company { id } } }')
  t.same(noCompany.data.createUser, { name: 'Solo', company: null })
  const count = await app.inject({ method: 'GET', url: '/api/v1/users?limit=1', headers: ada })
  t.equal(count.json().page.total, 7, 'three users were created, the refused ones were not')
})
