// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * openapi-zod-client reads only `application/json` bodies unless told otherwise. openapi.yaml lists
 * every RFC 9457 problem as `application/json` beside `application/problem+json` (decisions §16),
 * so with its defaults every error with a body is the `Problem` schema, and only the answers
 * without a JSON body (304) stay `z.void()`. The media-type expression earlier docs gave still works.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { generateZodClientFromOpenAPI } from 'openapi-zod-client'
import { parse } from 'yaml'

/** What docs/contracts.md tells users of openapi-zod-client to pass as `--media-type-expr`. */
const MEDIA_TYPE_EXPR = "mediaType === 'application/json' || mediaType === 'application/problem+json'"

const openApiDoc = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'))

/** Each generated `{ status: …, schema: … }` error entry, as [status, schema expression]. */
function errorSchemas(code: string): Array<[number, string]> {
  return [...code.matchAll(/status: (\d+),\s*description: `[^`]*`,\s*schema: ([^\n]+),/g)].map((m) => [Number(m[1]), m[2] as string])
}

t.test('with the --media-type-expr of docs/contracts.md every problem is typed as Problem', async (t) => {
  const code = String(
    await generateZodClientFromOpenAPI({ openApiDoc, disableWriteToFile: true, options: { isMediaTypeAllowed: MEDIA_TYPE_EXPR } }),
  )
  const errors = errorSchemas(code)
  t.ok(errors.length > 100, `${errors.length} error entries`)
  for (const [status, schema] of errors) {
    if (status === 304) t.equal(schema, 'z.void()', '304 has no body')
    else t.equal(schema, 'Problem', `status ${status} is a Problem`)
  }
  t.match(code, /const Problem = z\s*\.object\(\{\s*type: z\.string\(\),\s*title: z\.string\(\),\s*status:/)
})

t.test("with openapi-zod-client's defaults every problem is typed as Problem too", async (t) => {
  const code = String(await generateZodClientFromOpenAPI({ openApiDoc, disableWriteToFile: true, options: {} }))
  const errors = errorSchemas(code)
  t.ok(errors.length > 100, `${errors.length} error entries`)
  for (const [status, schema] of errors) {
    if (status === 304) t.equal(schema, 'z.void()', '304 has no body')
    else t.equal(schema, 'Problem', `status ${status} is a Problem`)
  }
  t.match(code, /response: Order,/, 'a plain read is the full Order (application/json), not its sparse variant')
})
