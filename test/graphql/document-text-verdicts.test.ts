/**
 * The nesting verdict is remembered per document text (request-problems.ts): a text that passed
 * passes again without a scan, and a text that nests too deeply is refused every time it comes,
 * however often a text that passes comes in between, and once more texts than are remembered
 * have passed.
 */
import t from 'tap'
import { NESTING_VERDICTS_KEPT } from '../../src/graphql/http/request-problems.ts'
import { bearer, build, gql } from '../helper.ts'

const admin = bearer(1, 'admin')
const deep = `{ orders(first: ${'['.repeat(150)}1${']'.repeat(150)}) { id } }`

t.test('a deep text is refused every time; a text that passed keeps passing', async (t) => {
  const app = await build(t)
  const post = (query: string) => gql(app, query, { ...admin, 'content-type': 'application/json' })
  const codes = async (query: string) =>
    ((await post(query)).json().errors ?? []).map((error: { extensions: { code: string } }) => error.extensions.code)
  for (let round = 0; round < 3; round++) {
    t.same(await codes('{ me { id } }'), [], `round ${round}: the shallow text executes`)
    t.same(await codes(deep), ['GRAPHQL_PARSE_FAILED'], `round ${round}: the deep text is refused`)
  }
  for (let i = 0; i <= NESTING_VERDICTS_KEPT; i++) await codes(`{ me { id a${i}: name } }`)
  t.same(await codes(deep), ['GRAPHQL_PARSE_FAILED'], 'after more texts than are remembered')
  t.same(await codes('{ me { id } }'), [], 'and the first text, let go of, is scanned again and passes')
})
