import t from 'tap'
import { readFile } from 'node:fs/promises'
import { buildClientSchema, buildSchema, getIntrospectionQuery, printSchema } from 'graphql'
import { parse } from 'yaml'
import { bearer, build } from '../helper.ts'

const openApiYaml = await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')
const sdl = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8')

t.test('the served OpenAPI document is openapi.yaml, as JSON and as the file itself', async (t) => {
  const app = await build(t)
  const json = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })
  t.equal(json.statusCode, 200)
  t.match(json.headers['content-type'], /^application\/json/)
  t.same(json.json(), parse(openApiYaml))

  const yaml = await app.inject({ method: 'GET', url: '/api/v1/openapi.yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.headers['content-type'], /^application\/yaml/)
  t.equal(yaml.body, openApiYaml)
})

t.test('Swagger UI is served at /docs', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/docs/' })
  t.equal(response.statusCode, 200)
  t.match(response.body, /swagger/i)
})

t.test('the live GraphQL schema, introspected, is schema.graphql', async (t) => {
  const app = await build(t)
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: bearer(2, 'orders:read'),
    payload: { query: getIntrospectionQuery({ descriptions: true, schemaDescription: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }) },
  })
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.notOk(body.errors, 'introspection is not refused')
  const live = printSchema(buildClientSchema(body.data))
  t.equal(live, printSchema(buildSchema(sdl)))
})

t.test('GET /graphql/schema.graphql serves the SDL file', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/graphql/schema.graphql' })
  t.equal(response.statusCode, 200)
  t.equal(response.body, sdl)
})
