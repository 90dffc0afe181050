import t from 'tap'
import { build } from '../helper.ts'

t.test('/graphiql is served outside production, without a credential', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/graphiql' })
  t.equal(response.statusCode, 200)
  t.match(response.body, /graphiql/i)
})

t.test('/graphiql does not exist in production', async (t) => {
  const app = await build(t, { env: { NODE_ENV: 'production', LOG_LEVEL: 'silent' } })
  t.equal((await app.inject({ method: 'GET', url: '/graphiql' })).statusCode, 404)
})

t.test('/graphiql is served by the service alone, with the Authorization template and the example query prefilled', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/graphiql' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^text\/html/)
  t.notMatch(response.body, /unpkg|https?:\/\//, 'no URL of another host')
  t.match(
    response.body,
    'data-headers="{\n  &quot;Authorization&quot;: &quot;Bearer &lt;paste a token from npm run token&gt;&quot;\n}"',
    'the header template',
  )
  t.match(response.body, /data-query="[^"]*user\(id: 2\) \{\s+name\s+orders\(last: 2\)/, "the README's example query")
  t.match(response.body, 'data-endpoint="graphql"', 'the endpoint, relative to the page (any host and port)')
  for (const gone of ['/graphiql/main.js', '/graphiql/sw.js', '/graphiql/config.js']) {
    t.equal((await app.inject({ method: 'GET', url: gone })).statusCode, 404, `Mercurius' ${gone} is gone`)
  }
})
