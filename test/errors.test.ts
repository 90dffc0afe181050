// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The error catalogue (src/errors.ts) is the one closed list of codes: each code answers with its
 * own status, docs/errors.md documents exactly that list, and no Fastify code reaches a client as an
 * API code.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { errorCodes } from 'fastify'
import { ApiError, codeForStatus, errorCatalogue, isErrorCode, problemKind, statusOf, type ErrorCode } from '../src/errors.ts'
import { FASTIFY_ERRORS, toApiError } from '../src/http/problems.ts'

const codes = Object.keys(errorCatalogue) as ErrorCode[]

t.test('an ApiError takes its status from the catalogue, and an unlisted code does not compile', async (t) => {
  for (const code of codes) t.equal(new ApiError(code, 'x').status, statusOf(code), code)
  // @ts-expect-error: a code that is not in the catalogue
  t.throws(() => new ApiError('NOT_A_CODE', 'x'))
  t.notOk(isErrorCode('NOT_A_CODE'))
  t.notOk(isErrorCode('toString'), 'an inherited property is not a code')
})

t.test('every status the catalogue answers with has its own problem type', async (t) => {
  for (const code of codes) {
    const status = statusOf(code)
    const fallback = problemKind(status >= 500 ? 599 : 499)
    t.not(problemKind(status).type === fallback.type && status !== 400 && status !== 500, true, `${code} (${status})`)
  }
})

t.test('a status alone maps to a catalogue code with that status', async (t) => {
  for (const status of [400, 401, 403, 404, 405, 406, 408, 409, 412, 413, 414, 415, 429, 431, 500, 503]) {
    t.equal(statusOf(codeForStatus(status)), status, String(status))
  }
  t.equal(codeForStatus(418), 'BAD_REQUEST')
  t.equal(codeForStatus(502), 'INTERNAL')
})

/** The rows of the "Error codes" table of docs/errors.md: code, status and GraphQL code. */
function documentedCodes(): Map<string, { status: number; graphql: string }> {
  const document = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8')
  const section = document.split('\n## Error codes\n')[1]?.split('\n## ')[0] ?? ''
  const rows = new Map<string, { status: number; graphql: string }>()
  for (const line of section.split('\n')) {
    const match = /^\| `([A-Z_]+)` \| (\d{3}) \| `([A-Z_]+)` \|/.exec(line)
    if (match) rows.set(match[1]!, { status: Number(match[2]), graphql: match[3]! })
  }
  return rows
}

t.test('the table of error codes in docs/errors.md is the catalogue', async (t) => {
  const documented = documentedCodes()
  t.same(
    Object.fromEntries(documented),
    Object.fromEntries(codes.map((code) => [code, { status: errorCatalogue[code].status, graphql: errorCatalogue[code].graphql }])),
  )
})

/** Fastify errors a client cannot cause: they are thrown while routes are declared or the server starts. */
const STARTUP_ONLY = new Set([
  'FST_ERR_CTP_INSTANCE_ALREADY_STARTED',
  'FST_ERR_ROUTE_MISSING_CONTENT_TYPE',
  'FST_ERR_ROUTE_MISSING_CONTENT',
])

t.test('every 4xx Fastify error maps explicitly to a catalogue code with the same status', async (t) => {
  const clientErrors = Object.values(errorCodes)
    .map((FastifyError) => new FastifyError('a', 'b', 'c'))
    .filter(
      (error) => error.code.startsWith('FST_ERR_') && error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500,
    )
    .filter((error) => !STARTUP_ONLY.has(error.code) && error.code !== 'FST_ERR_VALIDATION')
  t.ok(clientErrors.length >= 8, 'Fastify still declares its client errors where this test reads them')
  for (const error of clientErrors) {
    const mapped = toApiError(error)
    t.ok(Object.hasOwn(FASTIFY_ERRORS, error.code), `${error.code} is in the table`)
    t.equal(mapped.status, error.statusCode, `${error.code} keeps its status`)
    t.notMatch(mapped.code, /^FST_ERR/, `${error.code} is not an API code`)
  }
})

t.test('a validation error is VALIDATION_FAILED with its fields; an unknown library 4xx gets its status code', async (t) => {
  const validation = Object.assign(new Error('body/qty must be >= 1'), {
    code: 'FST_ERR_VALIDATION',
    statusCode: 400,
    validation: [{ instancePath: '/qty', keyword: 'minimum', message: 'must be >= 1', params: {}, schemaPath: '#' }],
    validationContext: 'body',
  })
  t.match(toApiError(validation), { code: 'VALIDATION_FAILED', status: 400, errors: [{ in: 'body' }] })
  const teapot = Object.assign(new Error('no coffee'), { code: 'SOME_PLUGIN_ERROR', statusCode: 418 })
  t.match(toApiError(teapot), { code: 'BAD_REQUEST', status: 400 })
  const tooMany = Object.assign(new Error('slow down'), { code: 'SOME_PLUGIN_LIMIT', statusCode: 429 })
  t.match(toApiError(tooMany), { code: 'RATE_LIMITED', status: 429 })
  t.match(toApiError(new TypeError('bug')), { code: 'INTERNAL', status: 500 })
})
