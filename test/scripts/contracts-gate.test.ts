// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The breaking-change gate (decisions §13, "Contract evolution"), run exactly as .ci/run runs it
 * (`npm run -s contracts:gate`), as a child process, on temp copies of the contracts: a breaking edit of
 * either contract fails it unless CHANGELOG.md lists the change under the unreleased "### Breaking" list,
 * an additive edit passes, and the persisted documents must still validate.
 */
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, stringify } from 'yaml'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')

// A dozen runs of `npm run contracts:gate`, each a few seconds on a busy machine.
t.setTimeout(600_000)

type OpenApi = {
  webhooks?: Record<string, unknown>
  paths: Record<string, Record<string, { operationId?: string; parameters?: unknown[]; responses?: unknown }>>
  components: { schemas: Record<string, { enum?: string[]; properties?: Record<string, unknown>; required?: string[] }> }
}

/** A temp copy of everything the gate reads; `edit` changes it before the gate runs. */
async function gate(
  t: Test,
  edit: {
    openapi?: (doc: OpenApi) => void
    /** Edits the release's openapi.yaml (to give it what today's contract then changes). */
    releasedOpenapi?: (doc: OpenApi) => void
    sdl?: (sdl: string) => string
    changelog?: (text: string) => string
    packageVersion?: string
  } = {},
) {
  const dir = await mkdtemp(join(tmpdir(), 'contracts-gate-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  for (const entry of ['openapi.yaml', 'schema.graphql', 'CHANGELOG.md', 'package.json', 'operations', 'contracts']) {
    await cp(join(root, entry), join(dir, entry), { recursive: true })
  }
  for (const [file, change] of [
    ['openapi.yaml', edit.openapi],
    ['contracts/releases/0.2.0/openapi.yaml', edit.releasedOpenapi],
  ] as const) {
    if (!change) continue
    const doc = parse(await readFile(join(dir, file), 'utf8')) as OpenApi
    change(doc)
    await writeFile(join(dir, file), stringify(doc))
  }
  if (edit.packageVersion) {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }
    await writeFile(join(dir, 'package.json'), JSON.stringify({ ...pkg, version: edit.packageVersion }))
  }
  if (edit.sdl) await writeFile(join(dir, 'schema.graphql'), edit.sdl(await readFile(join(dir, 'schema.graphql'), 'utf8')))
  if (edit.changelog) await writeFile(join(dir, 'CHANGELOG.md'), edit.changelog(await readFile(join(dir, 'CHANGELOG.md'), 'utf8')))
  // Asynchronous, so that a test can run several gates at once.
  const child = spawn('npm', ['run', '-s', 'contracts:gate', '--', '--root', dir], { cwd: root })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { status, stdout, stderr }
}

/** Adds lines to the top (unreleased) section's "### Breaking" list. */
const listBreaking =
  (...entries: string[]) =>
  (changelog: string) =>
    changelog.replace(/^### Breaking\n/m, `### Breaking\n\n${entries.map((entry) => `- ${entry}`).join('\n')}\n`)

const replaceOnce = (text: string, from: string | RegExp, to: string) => {
  if (!(typeof from === 'string' ? text.includes(from) : from.test(text))) throw new Error(`the contract no longer contains ${from}`)
  return text.replace(from, to)
}

/** OrderStatus.refunded and its description. */
const REFUNDED = '  """Paid, then refunded; final."""\n  refunded\n'

/** Order.total and its description. */
const ORDER_TOTAL = / {2}"""\n {2}Σ qty[^\n]*\n {2}"""\n {2}total: Int!\n/

t.test('today’s contracts pass against the latest release', async (t) => {
  const result = await gate(t)
  t.equal(result.status, 0, result.stderr)
  t.match(result.stdout, /contracts gate: passed against release \d+\.\d+\.\d+/)
})

t.test('removing a response field fails in each contract and names the change to list', async (t) => {
  const [rest, graphql] = await Promise.all([
    gate(t, {
      openapi: (doc) => {
        const user = doc.components.schemas.User as { properties: Record<string, unknown>; required: string[] }
        delete user.properties.name
        user.required = user.required.filter((name) => name !== 'name')
      },
    }),
    gate(t, { sdl: (sdl) => replaceOnce(sdl, ORDER_TOTAL, '') }),
  ])
  t.equal(rest.status, 1)
  // Against 0.2.0, whose GET answers were a oneOf of full and sparse, the removal shows through
  // the operations that answer a plain User (decisions §16): POST /users today, every one from the next release.
  t.match(rest.stderr, /REST `(GET \/users\/\{id\}|POST \/users)`/)
  t.match(rest.stderr, /name/)
  t.equal(graphql.status, 1)
  t.match(graphql.stderr, /GraphQL `Order\.total`/)
})

t.test('narrowing an enum a client sends fails in each contract', async (t) => {
  const [rest, graphql] = await Promise.all([
    gate(t, {
      openapi: (doc) => {
        const status = doc.components.schemas.OrderStatus as { enum: string[] }
        status.enum = status.enum.filter((value) => value !== 'refunded')
      },
    }),
    gate(t, { sdl: (sdl) => replaceOnce(sdl, REFUNDED, '') }),
  ])
  t.equal(rest.status, 1)
  t.match(rest.stderr, /REST `GET \/orders`/)
  t.equal(graphql.status, 1)
  t.match(graphql.stderr, /GraphQL `OrderStatus\.refunded`/)
})

t.test('adding a required parameter or argument fails in each contract', async (t) => {
  const [rest, graphql] = await Promise.all([
    gate(t, {
      openapi: (doc) => {
        doc.paths['/articles']?.get?.parameters?.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } })
      },
    }),
    gate(t, { sdl: (sdl) => replaceOnce(sdl, '  orders(\n', '  orders(\n    region: String!\n') }),
  ])
  t.equal(rest.status, 1)
  t.match(rest.stderr, /REST `GET \/articles`/)
  t.match(rest.stderr, /region/)
  t.equal(graphql.status, 1)
  t.match(graphql.stderr, /GraphQL `Query\.orders\.region`/)
})

t.test('additive changes pass: a new optional response field, a new operation, a new GraphQL field', async (t) => {
  const result = await gate(t, {
    openapi: (doc) => {
      const user = doc.components.schemas.User as { properties: Record<string, unknown> }
      user.properties.nickname = { type: ['string', 'null'], description: 'Added later.' }
      doc.paths['/health-report'] = { get: { operationId: 'getHealthReport', responses: { '200': { description: 'The report.' } } } }
    },
    sdl: (sdl) => replaceOnce(sdl, '  total: Int!\n', '  total: Int!\n\n  """Added later."""\n  note: String\n'),
  })
  t.equal(result.status, 0, result.stderr)
})

t.test('a breaking change listed under the unreleased "### Breaking" list passes; one listed elsewhere does not', async (t) => {
  const breakBoth = {
    openapi: (doc: OpenApi) => {
      doc.paths['/articles']?.get?.parameters?.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } })
    },
    sdl: (sdl: string) => replaceOnce(sdl, REFUNDED, ''),
  }
  const listed = await gate(t, {
    ...breakBoth,
    changelog: listBreaking(
      'REST `GET /articles`: the `region` query parameter is required; send it.',
      'GraphQL `OrderStatus.refunded`: removed; treat an unknown status as final.',
    ),
  })
  t.equal(listed.status, 0, listed.stderr)

  const halfListed = await gate(t, {
    ...breakBoth,
    changelog: listBreaking('GraphQL `OrderStatus.refunded`: removed; treat an unknown status as final.'),
  })
  t.equal(halfListed.status, 1)
  t.match(halfListed.stderr, /1 breaking change\(s\)/)
  t.match(halfListed.stderr, /REST `GET \/articles`/)

  // Under "### Added", or under a released section, an entry lists nothing.
  const misplaced = await gate(t, {
    ...breakBoth,
    changelog: (text) => text.replace(/^### Added\n/m, '### Added\n\n- REST `GET /articles`: x\n- GraphQL `OrderStatus.refunded`: x\n'),
  })
  t.equal(misplaced.status, 1)
  t.match(misplaced.stderr, /2 breaking change\(s\)/)
})

t.test('a persisted document the new schema refuses fails the gate even when the change is listed', async (t) => {
  const result = await gate(t, {
    sdl: (sdl) => replaceOnce(sdl, ORDER_TOTAL, ''),
    changelog: listBreaking('GraphQL `Order.total`: removed.'),
  })
  t.equal(result.status, 1)
  t.match(result.stderr, /persisted documents that today's schema refuses/)
  t.match(result.stderr, /operations\/\w+\.graphql: Cannot query field "total" on type "Order"/)
})

t.test('a webhook or a field of its payload removed fails; a new payload field passes', async (t) => {
  const webhooks = () => ({
    'order.created': {
      post: {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['id', 'title'],
                properties: { id: { type: 'string' }, title: { type: 'string', description: 'A field named title.' } },
              },
            },
          },
        },
        responses: { '200': { description: 'Received.' } },
      },
    },
    'order.archived': { post: { responses: { '200': { description: 'Received.' } } } },
  })
  const released = (doc: OpenApi) => {
    doc.webhooks = webhooks()
  }
  const removed = await gate(t, {
    releasedOpenapi: released,
    openapi: (doc) => {
      const hooks = webhooks() as Record<
        string,
        { post: { requestBody?: { content: Record<string, { schema: OpenApi['components']['schemas'][string] }> } } }
      >
      delete hooks['order.archived']
      const payload = hooks['order.created']!.post.requestBody!.content['application/json']!.schema
      delete payload.properties!.title
      payload.required = ['id']
      doc.webhooks = hooks
    },
  })
  t.equal(removed.status, 1)
  t.match(removed.stderr, /Webhook `webhook order\.archived`/)
  t.match(removed.stderr, /Webhook `webhook order\.created`/)

  const added = await gate(t, {
    releasedOpenapi: released,
    openapi: (doc) => {
      const hooks = webhooks() as ReturnType<typeof webhooks> & Record<string, unknown>
      const schema = hooks['order.created'].post.requestBody.content['application/json'].schema as { properties: Record<string, unknown> }
      schema.properties.note = { type: 'string', description: 'Added later.' }
      hooks['order.created'].post.requestBody.content['application/json'].schema.properties.title.description = 'Reworded.'
      doc.webhooks = hooks
    },
  })
  t.equal(added.status, 0, added.stderr)
})

t.test("package.json's version must be the latest release", async (t) => {
  const result = await gate(t, { packageVersion: '0.3.0' })
  t.equal(result.status, 1)
  t.match(result.stderr, /package\.json's version is 0\.3\.0, but the latest release in contracts\/releases\/ is 0\.2\.0/)
})
