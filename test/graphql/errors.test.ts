// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The GraphQL error formatter classifies graphql-js's own errors by the phase that raised them
 * (parse, validation, variables, execution), never by their text, and ApiErrors by the catalogue.
 */
import t from 'tap'
import { buildSchema, getVariableValues, GraphQLError, parse, validate } from 'graphql'
import { ApiError } from '../../src/errors.ts'
import { classify } from '../../src/graphql/errors.ts'

const schema = buildSchema('type Query { order(id: ID!): Order } type Order { id: ID! total: Int! }')

function raised(run: () => unknown): GraphQLError {
  try {
    run()
  } catch (error) {
    if (error instanceof GraphQLError) return error
  }
  throw new Error('expected a GraphQLError')
}

t.test('a syntax error is GRAPHQL_PARSE_FAILED with its location', async (t) => {
  const error = raised(() => parse('{ order(id: 1) { id }'))
  t.match(classify(error, false), { message: error.message, locations: [{ line: 1 }], extensions: { code: 'GRAPHQL_PARSE_FAILED' } })
})

t.test('a document that fails validation is GRAPHQL_VALIDATION_FAILED', async (t) => {
  const [error] = validate(schema, parse('{ order(id: 1) { nope } }'))
  t.same(classify(error!, false).extensions, { code: 'GRAPHQL_VALIDATION_FAILED' })
  const unnamed = new GraphQLError('Must provide operation name if query contains multiple operations.')
  t.same(classify(unnamed, false).extensions, { code: 'GRAPHQL_VALIDATION_FAILED' })
})

t.test('the rules about variables are validation: one used where its type does not fit, one never defined', async (t) => {
  const [wrongType] = validate(schema, parse('query ($id: Int) { order(id: $id) { id } }'))
  t.match(wrongType, { message: /used in position expecting type/ }, 'the rule that raised it')
  t.same(classify(wrongType!, false).extensions, { code: 'GRAPHQL_VALIDATION_FAILED' })
  const [undefinedVariable] = validate(schema, parse('{ order(id: $id) { id } }'))
  t.match(undefinedVariable, { message: /is not defined/ }, 'the rule that raised it')
  t.same(classify(undefinedVariable!, false).extensions, { code: 'GRAPHQL_VALIDATION_FAILED' })
})

t.test('variables that do not coerce are BAD_USER_INPUT', async (t) => {
  const document = parse('query ($id: ID!) { order(id: $id) { id } }')
  const definition = document.definitions[0]
  const variables = definition?.kind === 'OperationDefinition' ? (definition.variableDefinitions ?? []) : []
  const coerced = getVariableValues(schema, variables, { id: { not: 'an id' } })
  const [error] = 'errors' in coerced ? (coerced.errors ?? []) : []
  t.same(classify(error!, false).extensions, { code: 'BAD_USER_INPUT' })
})

t.test('an error graphql raises while executing, or any unknown error, is INTERNAL_SERVER_ERROR with its text hidden', async (t) => {
  const nonNull = new GraphQLError('Cannot return null for non-nullable field Order.total.', { path: ['order', 'total'] })
  t.same(classify(nonNull, true), {
    message: 'An internal error occurred; it has been logged.',
    path: ['order', 'total'],
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  })
  const bug = new GraphQLError('secret SQL', { originalError: new TypeError('secret SQL') })
  t.equal(classify(bug, true).extensions.code, 'INTERNAL_SERVER_ERROR')
})

t.test('an ApiError reads as its catalogue GraphQL code, with the REST code as reason unless it is GraphQL-only', async (t) => {
  const sku = new ApiError('UNKNOWN_SKU', 'No product has the sku "X".', {
    errors: [{ in: 'argument', name: 'input.items.0.sku', message: 'unknown' }],
  })
  t.same(classify(new GraphQLError(sku.message, { originalError: sku }), true).extensions, {
    code: 'BAD_USER_INPUT',
    reason: 'UNKNOWN_SKU',
    errors: [{ in: 'argument', name: 'input.items.0.sku', message: 'unknown' }],
  })
  const cost = new ApiError('COST_LIMIT_EXCEEDED', 'Too costly.', { extensions: { cost: 6000, maxCost: 5000 } })
  t.same(classify(new GraphQLError(cost.message, { originalError: cost }), false).extensions, {
    code: 'COST_LIMIT_EXCEEDED',
    cost: 6000,
    maxCost: 5000,
  })
  const mercurius = Object.assign(new Error('PersistedQueryNotFound'), { code: 'MER_ERR_GQL_PERSISTED_QUERY_NOT_FOUND' })
  t.same(classify(new GraphQLError(mercurius.message, { originalError: mercurius }), false), {
    message: 'PersistedQueryNotFound',
    extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
  })
})
