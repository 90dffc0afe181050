/**
 * Text is read back exactly as the client sent it, on PGlite as on PostgreSQL (both run this file):
 * a leading U+FEFF is a character of the client's text, not a byte order mark to drop. PGlite's
 * own row decoding drops it; src/db/exact-text-pglite.ts gives it back.
 */
import t from 'tap'
import { sql } from 'kysely'
import { bearer, build, createTestDatabase, gql } from '../helper.ts'

const author = bearer(1, 'admin articles:write')
const BOM = '\uFEFF'

t.test('an article and a comment created with a leading U+FEFF read back byte for byte, over REST and GraphQL', async (t) => {
  const app = await build(t)
  const title = `${BOM}Title with a leading BOM`
  const body = `${BOM}${BOM}Body with two, and one ${BOM} inside`
  const created = await app.inject({ method: 'POST', url: '/api/v1/articles', headers: author, payload: { title, body } })
  t.equal(created.statusCode, 201)
  t.equal(created.json().title, title, 'the creation answer')
  const id = created.json().id as number

  const read = await app.inject({ method: 'GET', url: `/api/v1/articles/${id}`, headers: author })
  t.same(Buffer.from(read.json().title), Buffer.from(title), 'REST GET: the title, byte for byte')
  t.same(Buffer.from(read.json().body), Buffer.from(body), 'REST GET: the body')
  const listed = await app.inject({ method: 'GET', url: '/api/v1/articles?sort=-id&limit=1', headers: author })
  t.equal(listed.json().data[0].title, title, 'REST list')

  const comment = `${BOM}a comment`
  const commented = await app.inject({
    method: 'POST',
    url: `/api/v1/articles/${id}/comments`,
    headers: author,
    payload: { body: comment },
  })
  t.equal(commented.statusCode, 201)
  const graphql = await gql(app, { query: `{ article(id: "${id}") { title body comments(first: 5) { body } } }` }, author)
  t.equal(graphql.statusCode, 200, graphql.body)
  const article = graphql.json().data.article
  t.equal(article.title, title, 'GraphQL: the title')
  t.equal(article.body, body, 'GraphQL: the body')
  t.equal(article.comments[0].body, comment, 'GraphQL: the comment, through its loader')

  const stored = await app.db.selectFrom('articles').select(['title', 'body']).where('id', '=', id).executeTakeFirstOrThrow()
  t.same(stored, { title, body }, 'the database returns what it stores')
})

t.test('the database layer returns every field that starts with U+FEFF whole, nulls and other types untouched', async (t) => {
  const database = await createTestDatabase(t)
  const { rows } = await sql<{ a: string; b: string | null; c: string; d: number; e: string[]; f: string }>`
    select ${`${BOM}x`}::text as a, null::text as b, ${BOM}::text as c, 7 as d,
           array[${`${BOM}y`}::text] as e, ${'plain'}::text as f
  `.execute(database.db)
  t.same(rows, [{ a: `${BOM}x`, b: null, c: BOM, d: 7, e: [`${BOM}y`], f: 'plain' }])
})
