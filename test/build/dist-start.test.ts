// Runs once in CI: its server runs on an in-memory PGlite whatever DATABASE_URL says, so .ci/run runs it in the embedded-database run only.
/**
 * First run: `npm run build` compiles the service into dist/, and the compiled server
 * starts from it (`npm run start:dist`), finds its contracts, migrations and persisted-query
 * manifest, prints the start banner, and every URL the banner names answers.
 */
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startBanner } from '../../src/start-banner.ts'
import { tokenFor } from '../helper.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

t.test('the banner names every entry point and the database, never a password', async (t) => {
  const base = {
    databaseUrl: undefined,
    dataDir: './data',
    redisUrl: undefined,
    publicUrl: undefined,
    jwtSecret: 'a-secret-of-at-least-32-characters-0123',
    jwtSecretIsDefault: false,
    jwtIssuer: undefined,
    nodeEnv: 'development',
  }
  const local = startBanner(base, 'http://127.0.0.1:3000')
  for (const line of [
    /REST API\s+http:\/\/127\.0\.0\.1:3000\/api\/v1$/m,
    /Docs\s+http:\/\/127\.0\.0\.1:3000\/docs$/m,
    /GraphiQL\s+http:\/\/127\.0\.0\.1:3000\/graphiql$/m,
    /GraphQL\s+http:\/\/127\.0\.0\.1:3000\/graphql\s+\(subscriptions: ws:\/\/127\.0\.0\.1:3000\/graphql\)$/m,
    /MCP\s+http:\/\/127\.0\.0\.1:3000\/mcp\s+\(agents: docs\/agents\.md\)$/m,
    /Health\s+http:\/\/127\.0\.0\.1:3000\/healthz, http:\/\/127\.0\.0\.1:3000\/readyz$/m,
    /Database\s+embedded PGlite, files in \.\/data$/m,
  ])
    t.match(local, line)
  t.ok(local.split('\n').length <= 20, 'one screen')
  const postgres = startBanner(
    { ...base, databaseUrl: 'postgres://app:s3cret@db.internal:5432/orders', redisUrl: 'redis://:hush@cache:6379' },
    'http://0.0.0.0:8080',
  )
  t.notMatch(postgres, /s3cret|hush/, 'passwords are not printed')
  t.match(postgres, /Database\s+PostgreSQL postgres:\/\/app:\*\*\*@db\.internal:5432\/orders/)
  t.match(postgres, /Docs\s+http:\/\/localhost:8080\/docs/, 'a wildcard address is shown as localhost')
  t.match(
    startBanner({ ...base, publicUrl: 'https://api.example.com' }, 'http://127.0.0.1:3000'),
    /Docs\s+https:\/\/api\.example\.com\/docs/,
  )
  t.notMatch(startBanner({ ...base, nodeEnv: 'production' }, 'http://127.0.0.1:3000'), /GraphiQL/, 'production serves no GraphiQL')
  const issuer = { issuer: 'https://id.example.com/', audience: 'api', jwksUrl: undefined, fetchTimeoutMs: 2000, cooldownMs: 10_000 }
  const fromIssuer = startBanner({ ...base, jwtSecret: undefined, jwtIssuer: issuer }, 'http://127.0.0.1:3000')
  t.match(fromIssuer, /Tokens:\s+from https:\/\/id\.example\.com\/ \(JWT_ISSUER\)$/m)
  t.notMatch(fromIssuer, /npm run -s token/, 'no HS256 token to make: the server would refuse it')
})

// Compiling the project and starting it from dist/ takes minutes when other test files share the
// two cores: the file's own bound, above tap's default for a file (package.json "tap" → "timeout").
t.setTimeout(300_000)

t.test('npm run build emits a server that starts from dist/ and answers at every URL of its banner', { timeout: 300_000 }, async (t) => {
  // Inside the project (under .tap/, ignored), as dist/ is, so contracts and node_modules resolve the same way.
  const outDir = join(root, '.tap', `dist-${process.pid}-${randomBytes(3).toString('hex')}`)
  t.teardown(() => rm(outDir, { recursive: true, force: true }))
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: root, encoding: 'utf8' })
  t.equal(build.status, 0, `tsc: ${build.stdout}${build.stderr}`)

  const child = spawn(process.execPath, [join(outDir, 'src/server.js')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: 'memory://',
      PORT: '0',
      HOST: '127.0.0.1',
      REDIS_URL: '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      JWT_SECRET: 'test-secret-0123456789abcdef0123456789abcdef',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  t.teardown(() => void child.kill('SIGKILL'))
  let stderr = ''
  const banner = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
      if (/A token:/.test(stderr)) resolve(stderr)
    })
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}: ${stderr}`)))
  })
  t.match(banner, /Database\s+embedded PGlite in memory/)
  const url = (label: string) => new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(banner)?.[1] ?? ''
  const authorization = `Bearer ${tokenFor(2, 'orders:read')}`

  t.equal((await fetch(url('Docs'))).status, 200, 'Docs')
  t.equal((await fetch(url('GraphiQL'))).status, 200, 'GraphiQL')
  const [healthz, readyz] = /Health\s+(\S+), (\S+)/.exec(banner)!.slice(1)
  t.equal((await fetch(healthz!)).status, 200, 'healthz')
  t.equal((await fetch(readyz!)).status, 200, 'readyz')
  const orders = await fetch(`${url('REST API')}/orders?limit=1`, { headers: { authorization } })
  t.equal(orders.status, 200, 'REST API')
  t.equal(((await orders.json()) as { data: unknown[] }).data.length, 1, 'the demo data was loaded')
  const graphql = await fetch(url('GraphQL'), {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ ordersConnection(first: 1) { edges { node { id } } } }' }),
  })
  t.equal(graphql.status, 200, 'GraphQL')
  t.notOk(((await graphql.json()) as { errors?: unknown }).errors)
})
