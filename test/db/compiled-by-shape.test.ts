/**
 * A statement compiled once per shape (src/db/compiled-statement.ts): built and compiled on the
 * first run of a shape only, its values bound per run, and a parametersOf that disagrees with the
 * built statement refused before anything runs.
 */
import t from 'tap'
import { sql } from 'kysely'
import { compiledByShape } from '../../src/db/compiled-statement.ts'
import { createTestDatabase } from '../helper.ts'

interface ProductQuery {
  minPrice?: number
  limit: number
}

t.test('a shape is built once; each run binds its own values', async (t) => {
  const { db, runStatement } = await createTestDatabase(t)
  const built: string[] = []
  const products = compiledByShape(
    { db, run: runStatement },
    {
      shapeOf: (query: ProductQuery) => (query.minPrice === undefined ? 'all' : 'min'),
      build: (query) => {
        built.push(query.minPrice === undefined ? 'all' : 'min')
        const where = query.minPrice === undefined ? sql`` : sql`where price >= ${query.minPrice}`
        return sql<{ sku: string; price: number }>`select sku, price from products ${where} order by sku limit ${query.limit}`
      },
      parametersOf: (query) => [...(query.minPrice === undefined ? [] : [query.minPrice]), query.limit],
    },
  )
  const all = await products(db, { limit: 100 })
  const cheapest = Math.min(...all.map((row) => row.price))
  const dearest = Math.max(...all.map((row) => row.price))
  t.ok(all.length > 1, 'the seeded products')
  t.same(await products(db, { limit: 1 }), all.slice(0, 1), 'the same shape, another limit')
  t.same(
    await products(db, { minPrice: dearest, limit: 100 }),
    all.filter((row) => row.price >= dearest),
  )
  t.same(await products(db, { minPrice: cheapest, limit: 100 }), all, 'the second run of a shape binds its own values')
  t.same(built, ['all', 'min'], 'each shape built once')
})

t.test('a parametersOf that lists other values than the statement binds is refused', async (t) => {
  const { db } = await createTestDatabase(t)
  const wrong = compiledByShape(
    { db, run: undefined },
    {
      shapeOf: () => 'one',
      build: (query: ProductQuery) => sql`select sku from products where price >= ${query.minPrice ?? 0} limit ${query.limit}`,
      // The limit before the price: it would bind each value to the other's placeholder.
      parametersOf: (query) => [query.limit, query.minPrice ?? 0],
    },
  )
  await t.rejects(wrong(db, { minPrice: 1, limit: 5 }), /binds other values than its parametersOf lists/)
})
