/**
 * Creating an order while the database is away: the same Idempotency-Key is sent again after every
 * 503 until `waitMs` have passed, so the order is created once however many attempts it takes.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { createOrder } from '../helper.ts'

/** Creates an order of one keyboard for the caller `headers` names; returns its REST id. */
export async function createOrderRetrying(
  app: FastifyInstance,
  key: string,
  headers: { authorization: string },
  waitMs: number,
): Promise<number> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const response = await createOrder(app, [{ sku: 'KB-101', qty: 1 }], { ...headers, 'idempotency-key': key })
    if (response.statusCode === 201) return response.json().id
    if (response.statusCode !== 503 || Date.now() > deadline) throw new Error(`creating ${key}: ${response.statusCode} ${response.body}`)
    await sleep(50)
  }
}
