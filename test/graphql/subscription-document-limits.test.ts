/**
 * A subscription document obeys what a query document obeys (decisions §9, §12): Mercurius neither
 * validates subscriptions nor runs preExecution for them, so without our hook an invalid, too deep
 * or too expensive subscription would be resolved for every event. The verdict uses the variables
 * the client sent, and ids are canonical like everywhere else.
 */
import t from 'tap'
import { bearer, build, tokenFor } from '../helper.ts'
import { eventually, listening, rawConnection, type RawConnection, createOrderNode } from './subscription-clients.ts'

/** The server's `error` on operation `id`, or undefined when it answered otherwise (or not in time). */
async function errorOn(connection: RawConnection, id: string) {
  await eventually(() => connection.messages.some((m) => m.id === id && (m.type === 'error' || m.type === 'complete')), 5000)
  const message = connection.messages.find((m) => m.id === id && m.type === 'error')
  return (message?.payload as Array<{ message: string; extensions?: Record<string, unknown> }> | undefined)?.[0]
}

const subscribe = (connection: RawConnection, id: string, query: string, variables?: Record<string, unknown>) =>
  connection.send({ id, type: 'subscribe', payload: { query, ...(variables ? { variables } : {}) } })

// 12 levels: orderCreated > user > orders > user > orders > … > id.
const DEEP =
  'subscription { orderCreated { user { orders(last: 1) { user { orders(last: 1) { user { orders(last: 1) { user { orders(last: 1) { user { orders(last: 1) { id } } } } } } } } } } } }'
// Per event: 1 + ⌈0.1⌉ + user (1 + orders n × (1 + items 20 × (1 + 2) + user (1 + 100 × 2))) = 3 + n × 262.
const PRICED =
  'subscription($n: Int = 100) { orderCreated { id user { orders(last: $n) { items { product { name } } user { orders(last: 100) { id } } } } } }'

t.test('invalid, too deep and too expensive subscriptions are refused on their own id; the allowed one receives events', async (t) => {
  const app = await build(t)
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(1, 'admin'))

  subscribe(connection, 'unknown-field', 'subscription { orderCreated { id noSuchField } }')
  t.match(
    await errorOn(connection, 'unknown-field'),
    { message: /noSuchField/, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
    'validated against the schema',
  )

  subscribe(connection, 'deep', DEEP)
  t.match(await errorOn(connection, 'deep'), { extensions: { code: 'DEPTH_LIMIT_EXCEEDED', depth: 12, maxDepth: 10 } }, 'depth is limited')

  subscribe(connection, 'priced-default', PRICED)
  t.match(
    await errorOn(connection, 'priced-default'),
    { extensions: { code: 'COST_LIMIT_EXCEEDED', cost: 3 + 100 * 262, maxCost: 5000 } },
    'the cost uses the variable default',
  )

  subscribe(connection, 'missing-variable', 'subscription($id: ID!) { orderStatusChanged(orderId: $id) { id } }')
  t.match(await errorOn(connection, 'missing-variable'), { extensions: { code: 'BAD_USER_INPUT' } }, 'a required variable must be sent')

  subscribe(connection, 'hex-id', 'subscription { orderStatusChanged(orderId: "0x10") { id } }')
  t.match(await errorOn(connection, 'hex-id'), { extensions: { code: 'BAD_USER_INPUT' } }, 'ids are canonical decimal integers')

  subscribe(connection, 'priced-small', PRICED, { n: 2 })
  // Give the server time to refuse it if it were going to; then an event must reach it.
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.notOk(
    connection.messages.some((m) => m.id === 'priced-small' && m.type === 'error'),
    'the same document with n = 2 is allowed',
  )
  const id = await createOrderNode(app, bearer(1, 'admin'))
  t.ok(
    await eventually(
      () =>
        connection.messages.some(
          (m) =>
            m.id === 'priced-small' &&
            m.type === 'next' &&
            (m.payload as { data?: { orderCreated?: { id?: string } } }).data?.orderCreated?.id === id,
        ),
      10_000,
    ),
    'and receives the next order',
  )
  t.notOk(
    connection.messages.some((m) => m.type === 'next' && m.id !== 'priced-small'),
    'no refused subscription received anything',
  )
})
