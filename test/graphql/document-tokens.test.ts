// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/** The token count that refuses a long subscription document agrees with graphql's parser, which refuses one over HTTP. */
import t from 'tap'
import { parse } from 'graphql'
import { exceedsTokens } from '../../src/graphql/limits/document-tokens.ts'

const parserRefuses = (document: string, maxTokens: number): boolean => {
  try {
    parse(document, { maxTokens })
    return false
  } catch (error) {
    return /tokens/.test((error as Error).message)
  }
}

t.test('a document exceeds the limit exactly when the parser stops at it', async (t) => {
  const documents = [
    'subscription { orderCreated { id } }',
    `subscription { orderCreated { ${Array.from({ length: 50 }, (_, i) => `a${i}: id`).join(' ')} } }`,
    `# a comment is no token\n${'# padding\n'.repeat(50)}subscription { orderCreated { id status } }`,
    'query ($n: Int = 100, $s: String = "a long string is one token, however long it is") { orders(first: $n) { id } }',
    '{ __typename ...on Query { __typename } }',
  ]
  for (const document of documents) {
    for (const maxTokens of [5, 10, 20, 40, 150, 200]) {
      t.equal(exceedsTokens(document, maxTokens), parserRefuses(document, maxTokens), `${maxTokens} tokens: ${document.slice(0, 40)}`)
    }
  }
})

t.test('a document that does not lex is left to the parser to refuse', async (t) => {
  t.equal(exceedsTokens(`subscription { orderCreated { id ${'~'.repeat(100)} } }`, 10), false)
})
