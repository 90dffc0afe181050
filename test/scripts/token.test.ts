/**
 * `npm run token` as a newcomer calls it: `--help` prints usage and exits 0; a wrong
 * option or value says what is wrong, shows the usage and exits 1, never with a stack trace; a
 * right call prints a token the service accepts.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, TEST_JWT_SECRET } from '../helper.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')

function token(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/token.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, JWT_SECRET: TEST_JWT_SECRET },
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

const noStackTrace = (text: string) => !/^\s+at /m.test(text) && !text.includes('node:internal')

t.test('--help and -h print the usage on stdout and exit 0', async (t) => {
  for (const flag of ['--help', '-h']) {
    const result = token(flag)
    t.equal(result.status, 0, flag)
    t.match(result.stdout, /^Usage: npm run -s token -- --sub <user id>/)
    t.match(result.stdout, /--scope/)
    t.match(result.stdout, /--ttl/)
    t.equal(result.stderr, '')
  }
})

t.test('a wrong call says what is wrong, shows the usage and exits 1 without a stack trace', async (t) => {
  for (const [args, problem] of [
    [['--bogus'], /Unknown option '--bogus'/],
    [['--sub'], /--sub/],
    [[], /--sub must be a user id/],
    [['--sub', 'two'], /--sub must be a user id/],
    [['--sub', '2', '--ttl', 'forever'], /--ttl must look like/],
    // A token the server would refuse (JWT_MAX_LIFETIME, 24 h by default) is never printed.
    [['--sub', '2', '--ttl', '2d'], /--ttl 2d is longer than JWT_MAX_LIFETIME \(86400 s\)/],
  ] as const) {
    const result = token(...args)
    t.equal(result.status, 1, args.join(' ') || '(no arguments)')
    t.match(result.stderr, problem)
    t.match(result.stderr, /Usage: npm run -s token/)
    t.ok(noStackTrace(result.stderr), 'no stack trace')
    t.equal(result.stdout, '')
  }
})

t.test('a right call prints one token the service accepts, up to the longest lifetime it takes', async (t) => {
  const app = await build(t)
  for (const ttl of [[], ['--ttl', '1d'], ['--ttl', '24h']]) {
    const result = token('--sub', '2', '--scope', 'orders:read', ...ttl)
    t.equal(result.status, 0, ttl.join(' '))
    t.match(result.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/)
    const response = await app.inject({
      method: 'GET',
      url: '/api/v1/orders?limit=1',
      headers: { authorization: `Bearer ${result.stdout.trim()}` },
    })
    t.equal(response.statusCode, 200, `${ttl.join(' ') || 'the default ttl'}: accepted`)
  }
})
