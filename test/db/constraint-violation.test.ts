/**
 * A constraint that fires in the database is a 4xx mapped from the constraint, the same in both
 * styles (decisions §12): the errors here are the real driver's (PGlite or PostgreSQL), raised by
 * statements that bypass the contract's validation, as a race or a rule the contract misses would.
 */
import t from 'tap'
import { GraphQLError } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import { sql } from 'kysely'
import { constraintViolation } from '../../src/db/constraint-violation.ts'
import { formatGraphqlErrors } from '../../src/graphql/errors.ts'
import { toApiError } from '../../src/http/problems.ts'
import { build, createTestDatabase } from '../helper.ts'

async function failureOf(statement: Promise<unknown>): Promise<unknown> {
  try {
    await statement
  } catch (error) {
    return error
  }
  throw new Error('the statement was expected to fail')
}

t.test('CHECK, unique, foreign-key and not-null violations map to 422/409 with a stable code', async (t) => {
  const { db } = await createTestDatabase(t)
  const check = await failureOf(sql`insert into products (sku, name, price) values ('NEG-1', 'Negative', -1)`.execute(db))
  const unique = await failureOf(
    sql`insert into products (sku, name, price) values ('NEG-2', 'Twice', 1), ('NEG-2', 'Twice', 1)`.execute(db),
  )
  const reference = await failureOf(sql`insert into orders (user_id, status, total) values (999999, 'pending', 0)`.execute(db))
  const missing = await failureOf(sql`insert into products (sku, name, price) values ('NEG-3', null, 1)`.execute(db))
  const cases = [
    { error: check, status: 422, code: 'CHECK_VIOLATION', names: 'products.price' },
    { error: unique, status: 409, code: 'UNIQUE_VIOLATION', names: 'products' },
    { error: reference, status: 422, code: 'REFERENCE_NOT_FOUND', names: 'orders.user_id' },
    { error: missing, status: 422, code: 'MISSING_VALUE', names: 'products.name' },
  ]
  for (const { error, status, code, names } of cases) {
    const mapped = constraintViolation(error)
    t.equal(mapped?.status, status, `${code}: status`)
    t.equal(mapped?.code, code)
    t.match(mapped?.detail, names, `${code}: the detail names ${names}`)
    t.notMatch(mapped?.detail, /insert|values|violates/i, 'no SQL or driver message reaches the client')
    t.equal(toApiError(error).code, code, `${code}: REST's error handler uses the same mapping`)
  }
  t.equal(constraintViolation(new Error('boom')), undefined, 'other errors are not constraint violations')
  t.equal(toApiError(new Error('boom')).status, 500)
  const rows = await db.selectFrom('products').select('sku').where('sku', 'in', ['NEG-1', 'NEG-2', 'NEG-3']).execute()
  t.same(rows, [], 'nothing was stored')
})

t.test('the GraphQL formatter reports a constraint violation as CONFLICT or BAD_USER_INPUT with its code as reason', async (t) => {
  const app = await build(t)
  const { db } = app
  const check = await failureOf(sql`insert into products (sku, name, price) values ('NEG-1', 'Negative', -1)`.execute(db))
  const unique = await failureOf(
    sql`insert into products (sku, name, price) values ('NEG-2', 'Twice', 1), ('NEG-2', 'Twice', 1)`.execute(db),
  )
  // The formatter only reads the app (for its log) from the context of a request.
  const context = { app } as unknown as MercuriusContext
  const formatted = formatGraphqlErrors(
    {
      data: { createProduct: null, other: null },
      errors: [
        new GraphQLError('x', { path: ['createProduct'], originalError: check as Error }),
        new GraphQLError('y', { path: ['other'], originalError: unique as Error }),
      ],
    },
    context,
  )
  t.equal(formatted.statusCode, 200)
  t.same(
    formatted.response.errors?.map((error) => error.extensions),
    [
      { code: 'BAD_USER_INPUT', reason: 'CHECK_VIOLATION' },
      { code: 'CONFLICT', reason: 'UNIQUE_VIOLATION' },
    ],
  )
})
