/**
 * Document texts graphql-js is not to be given are refused before anything parses them, as
 * documents that do not parse (decisions §8, §12): GRAPHQL_PARSE_FAILED, 400 under
 * application/graphql-response+json and 200 under application/json, nothing logged at error level.
 * A list literal thousands of levels deep overflowed graphql-js's recursive parser (an internal
 * error, its stack logged); an empty `query` was answered as an unknown persisted query.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { bearer, build, gql } from '../helper.ts'
import { captureLog } from '../log-capture.ts'

const admin = bearer(1, 'admin')
const MODERN = 'application/graphql-response+json'
const LEGACY = 'application/json'
const deepList = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`

/** An app whose log lines are kept, to show what reached error level. */
async function loggedApp(t: Parameters<typeof build>[0]) {
  const log = captureLog()
  const app = await build(t, { env: { LOG_LEVEL: 'info' }, loggerStream: log.stream })
  return { app, errorLines: () => log.lines.filter((line) => line.level >= 50) }
}

t.test('a list literal 5,000 levels deep, in an argument or a variable default, over POST or GET, does not parse', async (t) => {
  const { app, errorLines } = await loggedApp(t)
  const documents = [
    `{ orders(first: ${deepList(5000)}) { id } }`,
    `query ($first: Int = ${deepList(5000)}) { orders(first: $first) { id } }`,
    `mutation { createOrder(input: { items: ${deepList(5000)} }) { id } }`,
  ]
  for (const query of documents) {
    for (const [accept, status] of [
      [MODERN, 400],
      [LEGACY, 200],
    ] as const) {
      const response = await gql(app, query, { ...admin, 'content-type': 'application/json', accept })
      t.equal(response.statusCode, status, `${query.slice(0, 24)}… under ${accept}`)
      const [error, ...more] = response.json().errors
      t.same(more, [])
      t.match(error, {
        message: 'Syntax Error: Document nests deeper than 100 levels. Parsing aborted.',
        locations: [{ line: 1 }],
        extensions: { code: 'GRAPHQL_PARSE_FAILED' },
      })
    }
  }
  const get = await app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent(documents[0]!)}`,
    headers: { ...admin, accept: MODERN },
  })
  t.equal(get.statusCode, 400, 'GET too')
  t.equal(get.json().errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED')
  t.same(errorLines(), [], 'nothing logged at error level')
})

t.test('the nesting bound counts brackets, not what strings and comments hold; a document within it is parsed and validated', async (t) => {
  const { app, errorLines } = await loggedApp(t)
  const post = (query: string) => gql(app, query, { ...admin, 'content-type': 'application/json', accept: MODERN })
  const commented = await post(`{ me # ${'['.repeat(500)}\n { name } }`)
  t.equal(commented.statusCode, 200, 'brackets in a comment do not count')
  t.same(commented.json().data, { me: { name: 'Ada Lovelace' } })
  const inString = await post(`{ order(id: "${'['.repeat(500)}") { id } }`)
  t.equal(inString.json().errors[0].extensions.code, 'BAD_USER_INPUT', 'nor in a string: the id is refused as an id, after parsing')
  const inBlockString = await post(`{ order(id: """${'['.repeat(500)} \\""" ${'{'.repeat(500)}""") { id } }`)
  t.equal(inBlockString.json().errors[0].extensions.code, 'BAD_USER_INPUT', 'nor in a block string, escaped quotes included')
  const atTheBound = await post(`{ orders(first: ${deepList(98)}) { id } }`)
  t.equal(atTheBound.statusCode, 422, '100 levels (the selection, the arguments, 98 lists) parse')
  t.equal(atTheBound.json().errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED', 'and a list is not an Int')
  const past = await post(`{ orders(first: ${deepList(99)}) { id } }`)
  t.equal(past.json().errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED', 'one more does not')
  t.same(errorLines(), [])
})

t.test('an empty query is a document that does not parse, never an unknown persisted query', async (t) => {
  const { app, errorLines } = await loggedApp(t)
  for (const [accept, status] of [
    [MODERN, 400],
    [LEGACY, 200],
  ] as const) {
    const post = await gql(app, '', { ...admin, 'content-type': 'application/json', accept })
    t.equal(post.statusCode, status, `POST under ${accept}`)
    t.match(post.json().errors, [{ message: 'Syntax Error: Unexpected <EOF>.', extensions: { code: 'GRAPHQL_PARSE_FAILED' } }])
    const get = await app.inject({ method: 'GET', url: '/graphql?query=', headers: { ...admin, accept } })
    t.equal(get.statusCode, status, `GET under ${accept}`)
    t.equal(get.json().errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED')
  }

  // An automatic persisted query named by its hash is that query, whatever `query` says.
  const query = '{ me { name } }'
  const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') }
  const register = await gql(app, { query, extensions: { persistedQuery } }, { ...admin, 'content-type': 'application/json' })
  t.same(register.json().data, { me: { name: 'Ada Lovelace' } })
  const byHash = await gql(app, { query: '', extensions: { persistedQuery } }, { ...admin, 'content-type': 'application/json' })
  t.same(byHash.json().data, { me: { name: 'Ada Lovelace' } }, 'POST')
  const byHashGet = await app.inject({
    method: 'GET',
    url: `/graphql?query=&extensions=${encodeURIComponent(JSON.stringify({ persistedQuery }))}`,
    headers: admin,
  })
  t.same(byHashGet.json().data, { me: { name: 'Ada Lovelace' } }, 'GET')
  t.same(errorLines(), [])
})
