/**
 * The lines `npm start` prints once the server listens: where the API, its docs, GraphiQL and the
 * probes are, and which database (and Redis) it uses. Human text on stderr, so that stdout stays
 * the JSON log a log shipper reads.
 */
import type { AppConfig } from './config.ts'
import { frontDoorLine, frontDoorRows } from './modules/meta/front-door.ts'

/** A URL with its password replaced, fit to print. */
function withoutPassword(raw: string): string {
  try {
    const url = new URL(raw)
    if (url.password) url.password = '***'
    return url.toString()
  } catch {
    return raw
  }
}

export function describeDatabase(config: Pick<AppConfig, 'databaseUrl' | 'dataDir'>): string {
  const url = config.databaseUrl
  if (url === undefined) return `embedded PGlite, files in ${config.dataDir}`
  if (url.startsWith('memory:')) return 'embedded PGlite in memory (nothing is kept after exit)'
  return `PostgreSQL ${withoutPassword(url)}`
}

/**
 * `address` is where the server listens (`http://127.0.0.1:3000`); links use PUBLIC_URL when it
 * is set, and a wildcard listen address (0.0.0.0, ::) is shown as localhost, which a browser can open.
 */
export function startBanner(
  config: Pick<
    AppConfig,
    'databaseUrl' | 'dataDir' | 'redisUrl' | 'publicUrl' | 'jwtSecret' | 'jwtSecretIsDefault' | 'jwtIssuer' | 'nodeEnv'
  >,
  address: string,
): string {
  const base = config.publicUrl ?? address.replace(/\/\/(0\.0\.0\.0|\[::\])(?=:|$)/, '//localhost')
  const rows: Array<[string, string]> = [
    // The same entry points the root URL answers with (modules/meta/front-door.ts).
    ...frontDoorRows(base, config.nodeEnv).map((row): [string, string] => [row.label, frontDoorLine(row)]),
    ['Database', describeDatabase(config)],
    ['Redis', config.redisUrl ? withoutPassword(config.redisUrl) : 'none (limits and cache per instance)'],
  ]
  const width = Math.max(...rows.map(([label]) => label.length))
  return [
    '',
    `Contract API listening on ${address}`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    '',
    ...(config.jwtIssuer ? [`  Tokens:   from ${config.jwtIssuer.issuer} (JWT_ISSUER)`] : []),
    ...(config.jwtSecret === undefined
      ? []
      : [`  A token:  npm run -s token -- --sub 2 --scope "orders:read orders:write articles:write"`]),
    ...(config.jwtSecretIsDefault ? ['  (signed with the development secret: set JWT_SECRET outside development)'] : []),
    '',
  ].join('\n')
}
