// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The page size rule is written once (src/pagination/page-size.ts); the contracts state it again
 * for their readers and tools. These tests hold the two in agreement, and check the rule itself.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { buildSchema, isObjectType } from 'graphql'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MIN_PAGE_SIZE, parsePageSize } from '../../src/pagination/page-size.ts'

t.test("openapi.yaml's Limit parameter states the page size bounds and default of page-size.ts", async (t) => {
  const document = parse(await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8'))
  const limit = document.components.parameters.Limit
  t.equal(limit.name, 'limit')
  t.same(
    { minimum: limit.schema.minimum, maximum: limit.schema.maximum, default: limit.schema.default },
    { minimum: MIN_PAGE_SIZE, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  )
  t.match(limit.description, `${MIN_PAGE_SIZE}-${MAX_PAGE_SIZE}`)
  // Every list operation takes its page size from that one parameter.
  const inline = Object.values(document.paths as Record<string, Record<string, { parameters?: Array<{ name?: string }> }>>)
    .flatMap((item) => Object.values(item))
    .flatMap((operation) => operation.parameters ?? [])
    .filter((parameter) => parameter.name === 'limit')
  t.same(inline, [], 'no operation declares its own limit')
})

t.test("schema.graphql's `first` arguments default to DEFAULT_PAGE_SIZE, and User.orders(last) says the same default", async (t) => {
  const sdl = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8')
  const schema = buildSchema(sdl)
  let firsts = 0
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue
    for (const field of Object.values(type.getFields())) {
      for (const argument of field.args) {
        if (argument.name === 'first') {
          firsts++
          t.equal(argument.defaultValue, DEFAULT_PAGE_SIZE, `${type.name}.${field.name}(first)`)
        }
      }
    }
  }
  t.ok(firsts > 0, 'the schema has paged fields')
  const userOrders = schema.getType('User')
  t.ok(isObjectType(userOrders))
  if (isObjectType(userOrders))
    t.match(userOrders.getFields().orders!.description, `the ${DEFAULT_PAGE_SIZE} most recent when \`last\` is omitted`)
  t.match(sdl, `default page size ${DEFAULT_PAGE_SIZE}`, 'the cost model section names the same default')
})

t.test('parsePageSize takes 1 to 100, defaults to 20, and refuses the rest as INVALID_PAGE_SIZE', async (t) => {
  t.equal(parsePageSize(undefined, 'first'), DEFAULT_PAGE_SIZE)
  t.equal(parsePageSize(null, 'first'), DEFAULT_PAGE_SIZE)
  t.equal(parsePageSize(MIN_PAGE_SIZE, 'first'), MIN_PAGE_SIZE)
  t.equal(parsePageSize(MAX_PAGE_SIZE, 'first'), MAX_PAGE_SIZE)
  for (const size of [0, -1, MAX_PAGE_SIZE + 1, 2.5]) {
    t.throws(() => parsePageSize(size, 'last'), { status: 400, code: 'INVALID_PAGE_SIZE' }, String(size))
  }
})
