// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * The response bound measures what JSON.stringify would write, byte for byte, without writing it
 * (src/graphql/limits/response-size.ts): exactly at the limit a response is sent, one byte over it is not.
 */
import t from 'tap'
import { GraphQLError } from 'graphql'
import { jsonLongerThan } from '../../src/graphql/limits/response-size.ts'

const values: Array<[string, unknown]> = [
  ['null', null],
  ['booleans and numbers', [true, false, 0, -1.5, 1e21, 123456789, Number.NaN, Number.POSITIVE_INFINITY]],
  ['an empty array and object', { a: [], b: {} }],
  ['text with quotes, backslashes and control characters', 'say "hi" \\ \n\t\r\b\f \u0000 \u0001 \u001f end'],
  ['text beyond ASCII', 'café – 日本語 – 🙂 – \u2028\u2029'],
  ['keys that need escaping', { 'quote"key': 1, é: 2, 'new\nline': 3 }],
  ['undefined and functions: left out of objects, null in arrays', { a: undefined, b: () => 1, c: [undefined, () => 1, 2] }],
  ['what toJSON returns', { when: new Date(0), error: new GraphQLError('failed', { extensions: { code: 'X' } }) }],
  [
    'a GraphQL result without a prototype',
    Object.assign(Object.create(null), {
      data: {
        orders: [
          { id: 'T3JkZXI6MQ', total: 19000 },
          { id: 'T3JkZXI6Mg', total: 0 },
        ],
      },
    }),
  ],
  ['deep nesting', { a: [[[{ b: [[{ c: 'deep' }]] }]]] }],
]

t.test('a value is longer than the limit exactly when its JSON is', async (t) => {
  for (const [name, value] of values) {
    const bytes = Buffer.byteLength(JSON.stringify(value))
    t.notOk(jsonLongerThan(value, bytes), `${name}: ${bytes} bytes fit in ${bytes}`)
    t.ok(jsonLongerThan(value, bytes - 1), `${name}: not in ${bytes - 1}`)
  }
})

t.test('the walk stops at the limit: a response of gigabytes is found too large without being walked', async (t) => {
  const body = 'x'.repeat(100_000)
  // 100,000 references to one 100,000-character body: 10 GB of JSON.
  const rows = Array.from({ length: 100 }, () => Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`a${i}`, body])))
  let visited = 0
  const counted = new Proxy(rows, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) visited++
      return Reflect.get(target, key, receiver)
    },
  })
  t.ok(jsonLongerThan({ data: { articles: counted } }, 5 * 1024 * 1024))
  t.ok(visited <= 1, `rows read: ${visited}`)
})
