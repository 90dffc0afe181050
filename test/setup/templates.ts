/**
 * Test databases are cloned from a template that is migrated and seeded once per run: a PGlite
 * data-directory dump (loading one takes a fraction of a fresh PGlite's start) and, when
 * DATABASE_URL points at PostgreSQL, a template database that `CREATE DATABASE … TEMPLATE` copies.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createDatabase, migrateToLatest } from '../../src/db/database.ts'
import { seedDemoData } from '../../src/db/seed.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
export const pgliteTemplatePath = join(root, '.tap/db-template/pglite.tar')

export function postgresUrl(): string | undefined {
  const url = process.env.DATABASE_URL
  return url && /^postgres(ql)?:/.test(url) ? url : undefined
}

export function templateDatabaseName(url: string): string {
  return `${new URL(url).pathname.slice(1) || 'postgres'}_template`
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Runs one statement on a connection of its own to `url` (CREATE and DROP DATABASE run outside any pool). */
export async function adminQuery<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    return (await admin.query<R>(text, values)).rows
  } finally {
    await admin.end()
  }
}

/** `CREATE DATABASE name` on serverUrl's server, a copy of `template` when given; returns the new database's URL. */
export async function createServerDatabase(serverUrl: string, name: string, template?: string): Promise<string> {
  await adminQuery(serverUrl, `CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`)
  return withDatabase(serverUrl, name)
}

/** Drops a database of serverUrl's server, whoever is still connected to it. */
export async function dropServerDatabase(serverUrl: string, name: string): Promise<void> {
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
}

/** `CREATE DATABASE name TEMPLATE <template of serverUrl's database>`; returns the new database's URL. */
export function createFromTemplate(serverUrl: string, name: string): Promise<string> {
  return createServerDatabase(serverUrl, name, templateDatabaseName(serverUrl))
}

export async function buildPgliteTemplate(): Promise<void> {
  const handle = await createDatabase({ url: 'memory://' })
  try {
    await migrateToLatest(handle.db)
    await seedDemoData(handle.db)
    // Uncompressed (about 40 MB): every test database loads it, and skipping the gunzip makes each
    // load about a quarter cheaper in CPU, which the suite pays a few hundred times per run.
    // No test creates a database inside PGlite: without template0 and template1 the dump holds
    // half the files, and each test database loads in about a third less CPU.
    for (const template of ['template0', 'template1']) {
      await handle.pglite!.exec(`ALTER DATABASE ${template} WITH IS_TEMPLATE false`)
      await handle.pglite!.exec(`DROP DATABASE ${template}`)
    }
    // A checkpoint first, so that a test database starts without replaying the seed's WAL.
    await handle.pglite!.exec('CHECKPOINT')
    const dump = await handle.pglite!.dumpDataDir('none')
    await mkdir(dirname(pgliteTemplatePath), { recursive: true })
    // Written aside and renamed, so a concurrent reader never sees half a file.
    const partial = `${pgliteTemplatePath}.${process.pid}`
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()))
    await rename(partial, pgliteTemplatePath)
  } finally {
    await handle.close()
  }
}

/**
 * The template as PGlite reads it: PGlite asks a data-directory Blob only for its bytes. A Blob's own
 * arrayBuffer() reads its copy back in small chunks, which cost a few hundred milliseconds of CPU per
 * test database; this one hands over a copy of the bytes read once per test process.
 */
class TemplateBlob extends Blob {
  readonly #bytes: ArrayBuffer

  constructor(bytes: ArrayBuffer) {
    super([])
    this.#bytes = bytes
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    // PGlite only reads them: its in-memory file system copies each file it writes.
    return this.#bytes
  }
}

let templateBytes: Promise<ArrayBuffer> | undefined

export async function loadPgliteTemplate(): Promise<Blob> {
  templateBytes ??= (async () => {
    if (!existsSync(pgliteTemplatePath)) await buildPgliteTemplate()
    return new Uint8Array(await readFile(pgliteTemplatePath)).buffer
  })()
  return new TemplateBlob(await templateBytes)
}

export async function buildPostgresTemplate(url: string): Promise<void> {
  const template = templateDatabaseName(url)
  await dropServerDatabase(url, template)
  await createServerDatabase(url, template)
  // Migrating and seeding are one long transaction each: no request's time budget applies (as
  // for the app's own migration, src/plugins/db.ts).
  const handle = await createDatabase({ url: withDatabase(url, template), poolSize: 1, statementTimeoutMs: 0 })
  try {
    await migrateToLatest(handle.db)
    await seedDemoData(handle.db)
  } finally {
    await handle.close()
  }
}
