/** What the event log tests share: a listening app, writes, the admin's view of the log, subscriptions with their event ids. */
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { Client } from 'graphql-ws'
import { bearer } from '../../helper.ts'
import { listening } from '../../graphql/subscription-clients.ts'

export const GRACE = 2
export const ALAN = 3
export const ADA = 1
export const scopes = {
  [GRACE]: 'orders:read orders:write articles:write',
  [ALAN]: 'orders:read orders:write articles:write',
  [ADA]: 'admin',
}

export async function serve(app: FastifyInstance) {
  const ws = await listening(app)
  return { ws, http: ws.replace('ws://', 'http://').replace('/graphql', '') }
}

export async function post(app: FastifyInstance, user: number, url: string, payload: object) {
  const response = await app.inject({ method: 'POST', url, headers: bearer(user), payload })
  if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}

export const newOrder = (app: FastifyInstance, user: number) => post(app, user, '/api/v1/orders', { items: [{ sku: 'KB-101', qty: 1 }] })

/** Every event id after `after` an admin lists: the log's end once the relay has caught up. */
export async function listIds(app: FastifyInstance, user: number, after: string): Promise<Array<{ id: string; type: string }>> {
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/events?after=${after}&limit=100`,
    headers: bearer(user, scopes[user as 1]),
  })
  return response.json().data.map((event: { id: string; type: string }) => ({ id: event.id, type: event.type }))
}

export async function logEnd(app: FastifyInstance): Promise<string> {
  const all = await listIds(app, ADA, '0')
  return all.at(-1)?.id ?? '0'
}

/** Waits until the admin's list shows `count` events after `after` (the relay numbers events asynchronously). */
export async function relayed(app: FastifyInstance, after: string, count: number) {
  for (let attempt = 0; attempt < 400; attempt++) {
    const ids = await listIds(app, ADA, after)
    if (ids.length >= count) return ids
    await sleep(25)
  }
  throw new Error(`${count} events were not relayed`)
}

/** A GraphQL subscription's events: the event ids (extensions.eventId) and data. */
export function subscribe(c: Client, query: string) {
  const received: Array<{ eventId: string; data: Record<string, { id?: string; databaseId?: number }> }> = []
  const errors: unknown[] = []
  const unsubscribe = c.subscribe<Record<string, { id?: string; databaseId?: number }>, { eventId: string }>(
    { query },
    {
      next: (value) => {
        if (value.errors) errors.push(...value.errors)
        else received.push({ eventId: String(value.extensions?.eventId), data: value.data! })
      },
      error: (error) => errors.push(error),
      complete: () => {},
    },
  )
  return {
    received,
    errors,
    unsubscribe,
    async waitFor(count: number) {
      for (let attempt = 0; attempt < 800 && received.length < count && errors.length === 0; attempt++) await sleep(25)
      return received.map((event) => event.eventId)
    },
  }
}
