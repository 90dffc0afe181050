/**
 * Baseline (a): bare Fastify + pg (or PGlite with PGLITE_DIR) serving the three REST scenarios
 * with the service's JWT check, envelope A with page.total, and for POST the same rows (order,
 * items, outbox event) and the same idempotency record, written in one transaction.
 */
import { createHash } from 'node:crypto'
import Fastify, { type FastifyReply } from 'fastify'
import { createAuthenticate, hasScope, signCursor } from './auth.ts'
import { type OrderJson, SELECT_ORDER, SELECT_ORDER_PAGE } from './orders-sql.ts'
import { openSqlClient } from './sql-client.ts'

const secret = process.env.JWT_SECRET ?? ''
const authenticate = createAuthenticate(secret)
const sql = await openSqlClient()
const app = Fastify({ logger: false })

type Problem = { status: number; title: string }
const problem = (status: number, title: string): Problem => ({ status, title })
const send = (reply: FastifyReply, { status, title }: Problem) =>
  reply.code(status).type('application/problem+json').send({ type: 'about:blank', title, status })

app.get<{ Params: { id: string } }>('/api/v1/orders/:id', async (request, reply) => {
  const caller = authenticate(request.headers.authorization)
  if (!caller) return send(reply, problem(401, 'Unauthorized'))
  if (!hasScope(caller, 'orders:read')) return send(reply, problem(403, 'Forbidden'))
  const id = Number(request.params.id)
  if (!Number.isInteger(id) || id < 1) return send(reply, problem(400, 'Bad Request'))
  const [order] = await sql.query<OrderJson>(SELECT_ORDER, [id])
  if (!order) return send(reply, problem(404, 'Not Found'))
  if (!caller.admin && order.user_id !== caller.userId) return send(reply, problem(403, 'Forbidden'))
  return reply.header('etag', `"${order.id}-${order.updated_at}"`).send(order)
})

app.get<{ Querystring: { limit?: string } }>('/api/v1/orders', async (request, reply) => {
  const caller = authenticate(request.headers.authorization)
  if (!caller) return send(reply, problem(401, 'Unauthorized'))
  if (!hasScope(caller, 'orders:read')) return send(reply, problem(403, 'Forbidden'))
  const limit = request.query.limit === undefined ? 20 : Number(request.query.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return send(reply, problem(400, 'Bad Request'))
  const rows = await sql.query<OrderJson & { page_total: number }>(SELECT_ORDER_PAGE, [limit + 1, caller.admin ? null : caller.userId])
  const total = rows[0]?.page_total ?? 0
  const data = rows.slice(0, limit).map(({ page_total: _, ...order }) => order)
  const last = data.at(-1)
  const cursor = rows.length > limit && last ? signCursor(secret, { sort: '-created_at', key: [last.created_at, last.id] }) : null
  let next: string | null = null
  if (cursor) {
    const url = new URL(request.url, `${request.protocol}://${request.host}`)
    url.searchParams.set('cursor', cursor)
    next = url.toString()
  }
  return reply.send({ data, page: { next, cursor, total } })
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

class Refusal extends Error {
  constructor(readonly problem: Problem) {
    super(problem.title)
  }
}

app.post<{ Body: { items: Array<{ sku: string; qty: number }> } }>(
  '/api/v1/orders',
  { schema: { body: itemsSchema } },
  async (request, reply) => {
    const caller = authenticate(request.headers.authorization)
    if (!caller) return send(reply, problem(401, 'Unauthorized'))
    if (!hasScope(caller, 'orders:write')) return send(reply, problem(403, 'Forbidden'))
    const key = request.headers['idempotency-key']
    const items = request.body.items
    try {
      const order = await sql.transaction(async (query) => {
        const prices = new Map(
          (
            await query<{ sku: string; price: number }>('select sku, price from products where sku = any($1::text[])', [
              items.map((item) => item.sku),
            ])
          ).map((row) => [row.sku, row.price]),
        )
        if (items.some((item) => !prices.has(item.sku))) throw new Refusal(problem(422, 'Unprocessable Content'))
        const total = items.reduce((sum, item) => sum + item.qty * prices.get(item.sku)!, 0)
        const [inserted] = await query<Omit<OrderJson, 'items'>>(
          `insert into orders (user_id, status, total) values ($1, 'pending', $2)
         returning id, status, total::int as total, user_id,
           to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
           to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at`,
          [caller.userId, total],
        )
        const row = inserted!
        await query(
          `insert into order_items (order_id, position, sku, qty, unit_price)
         select $1, p - 1, sku, qty, price from unnest($2::text[], $3::int[], $4::int[]) with ordinality as t(sku, qty, price, p)`,
          [row.id, items.map((item) => item.sku), items.map((item) => item.qty), items.map((item) => prices.get(item.sku)!)],
        )
        const created: OrderJson = {
          id: row.id,
          status: row.status,
          total: row.total,
          items: items.map((item) => ({ sku: item.sku, qty: item.qty, unit_price: prices.get(item.sku)! })),
          user_id: row.user_id,
          created_at: row.created_at,
          updated_at: row.updated_at,
        }
        await query('insert into outbox (topic, payload) values ($1, $2)', [
          'order.created',
          JSON.stringify({ orderId: row.id, userId: row.user_id, order: created }),
        ])
        if (typeof key === 'string') {
          const stored = await query(
            `insert into idempotency_keys (caller, key, request_hash, status, location, body, expires_at)
           values ($1, $2, $3, 201, $4, $5, now() + interval '24 hours') on conflict do nothing returning 1`,
            [
              caller.subject,
              key,
              createHash('sha256')
                .update(JSON.stringify({ method: 'POST', path: request.url, body: request.body }))
                .digest('hex'),
              `${request.protocol}://${request.host}/api/v1/orders/${row.id}`,
              JSON.stringify(created),
            ],
          )
          if (stored.length === 0) throw new Refusal(problem(409, 'Conflict'))
        }
        return created
      })
      return reply
        .code(201)
        .header('location', `${request.protocol}://${request.host}/api/v1/orders/${order.id}`)
        .header('etag', `"${order.id}-${order.updated_at}"`)
        .send(order)
    } catch (error) {
      if (error instanceof Refusal) return send(reply, error.problem)
      throw error
    }
  },
)

app.get('/healthz', async () => ({ status: 'ok' }))
app.addHook('onClose', () => sql.close())
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
