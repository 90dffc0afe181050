/**
 * A connection that ends while carrying subscriptions is one log line below error level saying how
 * many ended (a cut socket with 100 subscriptions wrote 100 error lines, one per
 * subscription, from the AbortError that ending each one raises in its queue).
 */
import t from 'tap'
import { build, tokenFor } from '../helper.ts'
import { captureLog } from '../log-capture.ts'
import { createGracesOrder, eventually, listening, rawConnection, subscriptionCount } from './subscription-clients.ts'

const SUBSCRIPTION = 'subscription { orderCreated { id total user { name } } }'
const ERROR_LEVEL = 50

t.test(
  'a socket cut while its 100 subscriptions receive events: one info line, "100 subscriptions ended", and no error line',
  async (t) => {
    const log = captureLog()
    const app = await build(t, { env: { LOG_LEVEL: 'info' }, loggerStream: log.stream })
    const connection = await rawConnection(t, await listening(app))
    await connection.init(tokenFor(2, 'orders:read'))
    for (let i = 0; i < 100; i++) connection.send({ id: `s${i}`, type: 'subscribe', payload: { query: SUBSCRIPTION } })
    t.ok(await eventually(() => subscriptionCount(app, 'order.created') === 100, 20_000), '100 subscriptions')

    // Events on their way when the socket is cut, and one after.
    await Promise.all([createGracesOrder(app), createGracesOrder(app), createGracesOrder(app)])
    t.ok(await eventually(() => connection.messages.some((m) => m.type === 'next'), 10_000), 'events are being delivered')
    connection.socket.terminate()
    t.ok(await eventually(() => subscriptionCount(app, 'order.created') === 0), 'the subscriptions ended')
    await createGracesOrder(app)
    // What the cut would log comes within this.
    await new Promise((resolve) => setTimeout(resolve, 1000))

    t.same(
      log.lines.filter((line) => line.level >= ERROR_LEVEL).map((line) => line.msg),
      [],
      'no line at error level',
    )
    const closed = log.lines.filter((line) => /subscription/i.test(line.msg) && line.msg !== 'request completed')
    t.equal(closed.length, 1, 'one line about the subscriptions')
    t.match(closed[0], {
      level: 30,
      msg: 'WebSocket connection closed; 100 subscriptions ended with it',
      subscriptions: 100,
      caller: '2',
      closeCode: 1006,
    })
  },
)

t.test('a connection without subscriptions closes without a line', async (t) => {
  const log = captureLog()
  const app = await build(t, { env: { LOG_LEVEL: 'info', EVENTS_RELAY: 'false' }, loggerStream: log.stream })
  const connection = await rawConnection(t, await listening(app))
  await connection.init(tokenFor(2, 'orders:read'))
  connection.socket.close()
  t.ok(await eventually(() => app.websocketServer.clients.size === 0))
  t.same(
    log.lines.filter((line) => /WebSocket/.test(line.msg)),
    [],
  )
})
