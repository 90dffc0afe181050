import t from 'tap'
import { readFile } from 'node:fs/promises'
import { buildClientSchema, buildSchema, getIntrospectionQuery, printSchema } from 'graphql'
import { parse } from 'yaml'
import { bearer, build, gql } from '../helper.ts'

const openApiYaml = await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')
const sdl = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8')

/** openapi.yaml with its `servers` replaced: the one difference the served copy may have. */
function withServers(document: Record<string, unknown>, servers: unknown): Record<string, unknown> {
  return { ...document, servers }
}

t.test('the served OpenAPI document is openapi.yaml, as JSON and as the file itself, but for a relative `servers`', async (t) => {
  const app = await build(t)
  const file = parse(openApiYaml) as Record<string, unknown>
  const json = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })
  t.equal(json.statusCode, 200)
  t.match(json.headers['content-type'], /^application\/json/)
  const served = json.json()
  t.same(
    served.servers.map((server: { url: string }) => server.url),
    ['/api/v1'],
    'servers is relative: the host and port the document came from',
  )
  t.same(served, withServers(file, served.servers), 'nothing but servers differs from openapi.yaml')

  const yaml = await app.inject({ method: 'GET', url: '/api/v1/openapi.yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.headers['content-type'], /^application\/yaml/)
  t.same(parse(yaml.body), served, 'the YAML says what the JSON says')
  const withoutServers = (text: string) => text.replace(/^servers:\n(?:[ -].*\n)+/m, '')
  t.not(withoutServers(openApiYaml), openApiYaml, 'the file has a servers block')
  t.equal(withoutServers(yaml.body), withoutServers(openApiYaml), "the YAML is the file's own text but for the servers block")

  const docs = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(docs.statusCode, 200)
  t.same(docs.json(), served, 'Swagger UI is given the same document')
})

t.test('with PUBLIC_URL the served `servers` is that URL under /api/v1, and nothing else differs', async (t) => {
  const app = await build(t, { env: { PUBLIC_URL: 'https://api.example.com/shop/' } })
  const file = parse(openApiYaml) as Record<string, unknown>
  for (const url of ['/api/v1/openapi.json', '/api/v1/openapi.yaml', '/docs/json']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 200, url)
    const served = parse(response.body) as { servers: Array<{ url: string }> }
    t.same(
      served.servers.map((server) => server.url),
      ['https://api.example.com/shop/api/v1'],
      `${url}: servers is PUBLIC_URL/api/v1`,
    )
    t.same(served, withServers(file, served.servers), `${url}: nothing but servers differs from openapi.yaml`)
  }
})

t.test('Swagger UI is served at /docs', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/docs/' })
  t.equal(response.statusCode, 200)
  t.match(response.body, /swagger/i)
})

t.test('the live GraphQL schema, introspected, is schema.graphql', async (t) => {
  const app = await build(t)
  const response = await gql(
    app,
    {
      query: getIntrospectionQuery({
        descriptions: true,
        schemaDescription: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        inputValueDeprecation: true,
      }),
    },
    bearer(2, 'orders:read'),
  )
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
