/**
 * Prints a bearer token for local use:
 *   npm run token -- --sub 2 --scope "orders:read orders:write" [--ttl 1h]
 * It signs with JWT_SECRET (or the development secret the server also falls back to), with the user
 * id in `sub` and in JWT_USER_ID_CLAIM when that names another claim.
 */
import { parseArgs } from 'node:util'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { loadConfig, loadEnvFile } from '../src/config.ts'

const USAGE = `Usage: npm run -s token -- --sub <user id> [--scope "<scopes>"] [--ttl <duration>]

Prints a signed bearer token (HS256, with JWT_SECRET or the server's development secret).

  --sub <id>        the user the token speaks for, e.g. 2 (demo users are 1-4; 1 is the admin)
  --scope <scopes>  space-separated: orders:read orders:write articles:write admin (default: none)
  --ttl <duration>  how long it is valid: 3600, 90s, 15m, 1h or 1d (default: 1h), at most
                    JWT_MAX_LIFETIME (24h unless set): the server refuses a longer-lived token
  -h, --help        this text

Example:
  TOKEN=$(npm run -s token -- --sub 2 --scope "orders:read orders:write articles:write")
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:3000/api/v1/orders
`

function seconds(ttl: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(ttl)
  if (!match) throw new Error(`--ttl must look like 3600, 90s, 15m, 1h or 1d, got "${ttl}"`)
  return Number(match[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd']
}

function fail(message: string): never {
  process.stderr.write(`token: ${message}\n\n${USAGE}`)
  process.exit(1)
}

let values: { sub?: string | undefined; scope?: string | undefined; ttl?: string | undefined; help?: boolean | undefined }
try {
  values = parseArgs({
    options: {
      sub: { type: 'string' },
      scope: { type: 'string', default: '' },
      ttl: { type: 'string', default: '1h' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values
} catch (error) {
  // An unknown option or a missing value: say which, and how to call it, without a stack trace.
  fail((error as Error).message)
}

if (values.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}

try {
  if (!values.sub || !/^[1-9]\d*$/.test(values.sub)) throw new Error('--sub must be a user id, for example --sub 2')
  loadEnvFile()
  const config = loadConfig()
  const ttl = seconds(values.ttl ?? '1h')
  // A token the server would refuse is no use to anyone: say so instead of printing it.
  if (ttl * 1000 > config.jwtMaxLifetimeMs) {
    throw new Error(
      `--ttl ${values.ttl} is longer than JWT_MAX_LIFETIME (${config.jwtMaxLifetimeMs / 1000} s): the server would refuse the token`,
    )
  }
  // With an identity provider and no JWT_SECRET the server takes no HS256 token (decisions §18).
  if (config.jwtSecret === undefined) {
    throw new Error("JWT_ISSUER is set without JWT_SECRET: the server takes only the issuer's tokens; set JWT_SECRET to use this one")
  }
  const sign = createTokenSigner(config.jwtSecret, config.jwtUserIdClaim)
  process.stdout.write(`${sign({ sub: values.sub, scope: values.scope ?? '' }, ttl)}\n`)
} catch (error) {
  fail((error as Error).message)
}
