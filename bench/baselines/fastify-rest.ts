/**
 * Baseline (a): bare Fastify + pg (or PGlite with PGLITE_DIR) serving the three REST scenarios
 * with the service's JWT check and ownership rule, envelope A with page.total and a signed
 * next-page cursor, and for POST the same rows (order, items, outbox event with its NOTIFY) and
 * the same idempotency record. As strong as the machine allows: named prepared statements
 * (sql-client.ts), each answer's JSON text built by PostgreSQL and sent as it is, and the keyed
 * create in one statement (orders-sql.ts).
 */
import { createHash } from 'node:crypto'
import Fastify, { type FastifyReply } from 'fastify'
import { createAuthenticate, hasScope, signCursor } from './auth.ts'
import { CREATE_ORDER_KEYED, SELECT_ORDER_PAGE_TEXT, SELECT_ORDER_TEXT } from './orders-sql.ts'
import { openSqlClient } from './sql-client.ts'

const secret = process.env.JWT_SECRET ?? ''
const authenticate = createAuthenticate(secret)
const sql = await openSqlClient()
const app = Fastify({ logger: false })

type Problem = { status: number; title: string }
const problem = (status: number, title: string): Problem => ({ status, title })
const send = (reply: FastifyReply, { status, title }: Problem) =>
  reply.code(status).type('application/problem+json').send({ type: 'about:blank', title, status })

interface OrderText {
  body: string
  user_id: number
  id: number
  updated_at: string
}

app.get<{ Params: { id: string } }>('/api/v1/orders/:id', async (request, reply) => {
  const caller = authenticate(request.headers.authorization)
  if (!caller) return send(reply, problem(401, 'Unauthorized'))
  if (!hasScope(caller, 'orders:read')) return send(reply, problem(403, 'Forbidden'))
  const id = Number(request.params.id)
  if (!Number.isInteger(id) || id < 1) return send(reply, problem(400, 'Bad Request'))
  const [order] = await sql.query<OrderText>(SELECT_ORDER_TEXT, [id])
  if (!order) return send(reply, problem(404, 'Not Found'))
  if (!caller.admin && order.user_id !== caller.userId) return send(reply, problem(403, 'Forbidden'))
  return reply.header('etag', `"${order.id}-${order.updated_at}"`).type('application/json; charset=utf-8').send(order.body)
})

app.get<{ Querystring: { limit?: string } }>('/api/v1/orders', async (request, reply) => {
  const caller = authenticate(request.headers.authorization)
  if (!caller) return send(reply, problem(401, 'Unauthorized'))
  if (!hasScope(caller, 'orders:read')) return send(reply, problem(403, 'Forbidden'))
  const limit = request.query.limit === undefined ? 20 : Number(request.query.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return send(reply, problem(400, 'Bad Request'))
  const rows = await sql.query<{ body: string; id: number; created_at: string; page_total: number }>(SELECT_ORDER_PAGE_TEXT, [
    limit + 1,
    caller.admin ? null : caller.userId,
  ])
  const total = rows[0]?.page_total ?? 0
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  const cursor = rows.length > limit && last ? signCursor(secret, { sort: '-created_at', key: [last.created_at, last.id] }) : null
  let next: string | null = null
  if (cursor) {
    const url = new URL(request.url, `${request.protocol}://${request.host}`)
    url.searchParams.set('cursor', cursor)
    next = url.toString()
  }
  const envelope = `{"data":[${page.map((row) => row.body).join(',')}],"page":${JSON.stringify({ next, cursor, total })}}`
  return reply.type('application/json; charset=utf-8').send(envelope)
})

const itemsSchema = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: {
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        required: ['sku', 'qty'],
        additionalProperties: false,
        properties: {
          sku: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' },
          qty: { type: 'integer', minimum: 1, maximum: 1000 },
        },
      },
    },
  },
} as const

app.post<{ Body: { items: Array<{ sku: string; qty: number }> } }>(
  '/api/v1/orders',
  { schema: { body: itemsSchema } },
  async (request, reply) => {
    const caller = authenticate(request.headers.authorization)
    if (!caller) return send(reply, problem(401, 'Unauthorized'))
    if (!hasScope(caller, 'orders:write')) return send(reply, problem(403, 'Forbidden'))
    const key = request.headers['idempotency-key']
    if (typeof key !== 'string' || key.length === 0 || key.length > 255) return send(reply, problem(400, 'Bad Request'))
    const items = request.body.items
    const hash = createHash('sha256')
      .update(JSON.stringify({ method: 'POST', path: request.url, body: request.body }))
      .digest('hex')
    const [created] = await sql.query<OrderText & { claimed: boolean }>(CREATE_ORDER_KEYED, [
      caller.userId,
      items.map((item) => item.sku),
      items.map((item) => item.qty),
      caller.subject,
      key,
      hash,
    ])
    if (!created) return send(reply, problem(422, 'Unprocessable Content'))
    if (!created.claimed) {
      // The key was used already: the stored answer for the same request, 422 for another.
      const [stored] = await sql.query<{ body: string; request_hash: string }>(
        'select body::text as body, request_hash from idempotency_keys where caller = $1 and key = $2',
        [caller.subject, key],
      )
      if (!stored || stored.request_hash !== hash) return send(reply, problem(422, 'Unprocessable Content'))
      return reply.code(201).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(stored.body)
    }
    return reply
      .code(201)
      .header('location', `${request.protocol}://${request.host}/api/v1/orders/${created.id}`)
      .header('etag', `"${created.id}-${created.updated_at}"`)
      .type('application/json; charset=utf-8')
      .send(created.body)
  },
)

app.get('/healthz', async () => ({ status: 'ok' }))
app.addHook('onClose', () => sql.close())
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
