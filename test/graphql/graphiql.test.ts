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
