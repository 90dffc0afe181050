// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * .ci/run leaves the files marked "Runs once in CI" out of its PostgreSQL run. The mark must be true:
 * a file that says it reads no database imports nothing that opens one and never names
 * DATABASE_URL; one that says its server runs on an in-memory PGlite sets that itself; one that
 * starts a copy on an embedded PGlite of its own gives it an environment without DATABASE_URL.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const testDir = join(root, 'test')
const MARK = '// Runs once in CI:'

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : testFiles(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
}

// This file names what it looks for, so it is left out of its own check.
const self = fileURLToPath(import.meta.url)
const marked = testFiles(testDir).filter((file) => file !== self && readFileSync(file, 'utf8').startsWith(MARK))
// What opens a database for a test: the app builder, the test databases, the driver module.
const OPENS_A_DATABASE = /from '[./]*(helper|setup\/templates|src\/app|src\/db\/database)\.ts'|createDatabase\(|buildApp\(/

t.ok(marked.length > 0, 'some files run once')
for (const file of marked) {
  const name = relative(root, file)
  const source = readFileSync(file, 'utf8')
  const firstLine = source.slice(0, source.indexOf('\n'))
  if (firstLine.includes('reads no database')) {
    t.notMatch(source, OPENS_A_DATABASE, `${name} reads no database: it imports nothing that opens one`)
    t.notMatch(source, /DATABASE_URL/, `${name} reads no database: it never names DATABASE_URL`)
  } else if (firstLine.includes('embedded PGlite of its own')) {
    // A copy of the project started as a newcomer starts it: an environment built from nothing, so
    // no DATABASE_URL of the run's reaches it.
    t.notMatch(source, /\.\.\.process\.env\b/, `${name} starts its server in an environment of its own`)
    t.notMatch(source.slice(firstLine.length), /DATABASE_URL/, `${name} never sets DATABASE_URL`)
  } else {
    t.match(firstLine, /in-memory PGlite/, `${name} says why it runs once`)
    t.match(source, /DATABASE_URL: 'memory:\/\/'/, `${name} starts its server on an in-memory PGlite itself`)
  }
}
