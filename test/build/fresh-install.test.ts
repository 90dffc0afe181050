// Runs once in CI: the copy it installs starts on an embedded PGlite of its own (an environment without DATABASE_URL), so .ci/run runs it in the embedded-database run only.
/**
 * A newcomer's first run (README, "Quick start"): the README's run command, run as it is written in
 * a copy of the repository as a clone has it (`git ls-files`), installs only the production
 * dependencies (no package the lockfile marks `dev` lands in node_modules) and starts the service,
 * which prints its banner and answers at the banner's first URL: a browser is sent to the docs, an
 * API client gets the banner's links. The banner's token command works in that copy, and so does a
 * read with it. npm reads its cache first (`npm_config_prefer_offline`), so CI downloads nothing
 * its own install already fetched.
 */
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
t.setTimeout(600_000)

/** The README's command that installs and starts the service: the first line of its first `sh` block that runs `npm start`. */
async function readmeRunCommand(): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(readme)?.[1] ?? ''
  const line = block.split('\n').find((text) => /\bnpm start\b/.test(text)) ?? ''
  return line.replace(/#.*$/, '').trim()
}

/** The lockfile's packages, by their path under the project, and whether each is for development only. */
async function lockedPackages(): Promise<Array<{ path: string; dev: boolean }>> {
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> }
  return Object.entries(lock.packages)
    .filter(([path]) => path.startsWith('node_modules/'))
    .map(([path, entry]) => ({ path, dev: entry.dev === true }))
}

/** Whether anything answers at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url)
    return true
  } catch {
    return false
  }
}

/** Sends a signal to a process group (the shell, npm and the server it started). */
function endGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // The group has ended.
  }
}

t.test(
  "the README's run command, in a fresh copy, installs only production dependencies and starts a service that answers at /",
  async (t) => {
    const command = await readmeRunCommand()
    t.match(command, /^npm ci --omit=dev && npm start$/, 'the README installs what running needs, then starts')

    const copy = await mkdtemp(join(tmpdir(), 'fresh-clone-'))
    t.teardown(() => rm(copy, { recursive: true, force: true }))
    const files = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).stdout.split('\0').filter(Boolean)
    t.ok(files.includes('package-lock.json') && files.includes('src/server.ts'), 'the tracked files')
    for (const file of files) {
      // A tracked file deleted in the working tree is not in a clone either.
      if (!existsSync(join(root, file))) continue
      await mkdir(dirname(join(copy, file)), { recursive: true })
      await copyFile(join(root, file), join(copy, file))
    }

    // A newcomer's environment, built from nothing: no database, Redis, secret or Node.js options of
    // the test run's; the service keeps its embedded database in the copy's ./data.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? copy,
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      PORT: '0',
      HOST: '127.0.0.1',
    }
    const run = spawn('sh', ['-c', command], { cwd: copy, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
    t.teardown(() => endGroup(run.pid!, 'SIGKILL'))
    let stderr = ''
    const banner = await new Promise<string>((resolve, reject) => {
      run.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk
        if (/A token:/.test(stderr)) resolve(stderr)
      })
      run.on('exit', (code) => reject(new Error(`${command} exited with ${code}: ${stderr}`)))
    })

    const packages = await lockedPackages()
    const installed = packages.filter(({ path }) => existsSync(join(copy, path)))
    t.same(
      installed.filter(({ dev }) => dev).map(({ path }) => path),
      [],
      'no development dependency is installed',
    )
    t.comment(`installed ${installed.length} of the lockfile's ${packages.length} packages`)
    t.ok(installed.length > 0 && existsSync(join(copy, 'node_modules/fastify')), 'the production dependencies are')

    const address = /^Contract API listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(banner)?.[1]
    t.ok(address, 'the banner names where the service listens')
    const browser = await fetch(`${address}/`, { headers: { accept: 'text/html' }, redirect: 'manual' })
    t.equal(browser.status, 302, 'a browser at / is sent on')
    t.equal(browser.headers.get('location'), '/docs')
    t.equal((await fetch(`${address}/docs`)).status, 200, 'the docs it leads to')
    const index = await fetch(`${address}/`)
    t.equal(index.status, 200, 'an API client at / gets the links')
    const { links } = (await index.json()) as { links: Record<string, string> }
    t.equal(links.rest_api, `${address}/api/v1`)
    t.equal(links.docs, `${address}/docs`)

    const token = spawnSync('npm', ['run', '-s', 'token', '--', '--sub', '2', '--scope', 'orders:read'], {
      cwd: copy,
      env,
      encoding: 'utf8',
    })
    t.equal(token.status, 0, `npm run token: ${token.stderr}`)
    const orders = await fetch(`${links.rest_api}/orders?fields=id,status`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } })
    t.equal(orders.status, 200, 'a read with the token, on the demo data')
    t.same(Object.keys(((await orders.json()) as { data: object[] }).data[0]!), ['id', 'status'])

    // What a terminal's Ctrl-C or a process manager does: the server shuts down and its port closes.
    const exited = new Promise<void>((resolve) => run.once('exit', () => resolve()))
    endGroup(run.pid!, 'SIGTERM')
    await exited
    const deadline = Date.now() + 30_000
    while (await answers(`${address}/healthz`)) {
      if (Date.now() > deadline) break
      await sleep(100)
    }
    t.notOk(await answers(`${address}/healthz`), 'SIGTERM stops the service')
  },
)
