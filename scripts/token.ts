/**
 * Prints a bearer token for local use:
 *   npm run token -- --sub 2 --scope "orders:read orders:write" [--ttl 1h]
 * It signs with JWT_SECRET (or the development secret the server also falls back to).
 */
import { parseArgs } from 'node:util'
import { createTokenSigner } from '../src/auth/tokens.ts'
import { loadConfig } from '../src/config.ts'

const { values } = parseArgs({
  options: {
    sub: { type: 'string' },
    scope: { type: 'string', default: '' },
    ttl: { type: 'string', default: '1h' },
  },
})

function seconds(ttl: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(ttl)
  if (!match) throw new Error(`--ttl must look like 3600, 90s, 15m, 1h or 7d, got "${ttl}"`)
  return Number(match[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd']
}

try {
  if (!values.sub || !/^[1-9]\d*$/.test(values.sub)) throw new Error('--sub must be a user id, for example --sub 2')
  const config = loadConfig()
  const sign = createTokenSigner(config.jwtSecret)
  process.stdout.write(sign({ sub: values.sub, scope: values.scope ?? '' }, seconds(values.ttl ?? '1h')) + '\n')
} catch (error) {
  process.stderr.write(`token: ${(error as Error).message}\n`)
  process.exit(1)
}
