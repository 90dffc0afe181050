/**
 * The bench scenarios (issue 13) and the servers each is measured on. A scenario builds the same
 * HTTP request for every server; only the path differs where a program mounts GraphQL elsewhere.
 */
import { randomUUID } from 'node:crypto'
import { type DataSetSize, ownerOfOrder, productSku } from './seed.ts'

export type ServerName = 'service' | 'fastify' | 'apollo' | 'mercurius'
export type BaselineName = Exclude<ServerName, 'service'>

export const BASELINE_TITLES: Record<BaselineName, string> = {
  fastify: 'bare Fastify + pg',
  apollo: 'Apollo Server 5 + DataLoader + pg',
  mercurius: 'plain Mercurius + loaders + graphql-jit + pg',
}

export type ScenarioId = 'get-order' | 'list-orders' | 'graphql-user-orders' | 'graphql-orders' | 'create-order'

export interface Tokens {
  owner: string
  admin: string
}

export interface BenchRequest {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  /** Headers that must be new on every request (the Idempotency-Key of a POST). */
  freshIdempotencyKey?: boolean
  graphql: boolean
}

export interface Scenario {
  id: ScenarioId
  title: string
  baselines: BaselineName[]
  /** Also measured at a fixed rate of half each baseline's maximum (p99 target). */
  fixedRate: boolean
  request(server: ServerName): BenchRequest
  /** SQL statements per request the target allows, and why; undefined where it sets none. */
  statementBudget: { max: number | 'baseline'; reason: string } | undefined
}

/** The record the single-order scenarios read, and the user who owns it. */
export function benchSubjects(size: DataSetSize): { orderId: number; userId: number } {
  const orderId = Math.floor(size.orders / 2) + 42
  return { orderId, userId: ownerOfOrder(size, orderId) }
}

function graphqlPath(server: ServerName): string {
  // Apollo's standalone server answers on its root path.
  return server === 'apollo' ? '/' : '/graphql'
}

function graphql(server: ServerName, token: string, query: string): BenchRequest {
  return {
    method: 'POST',
    path: graphqlPath(server),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    graphql: true,
  }
}

export function createScenarios(size: DataSetSize, tokens: Tokens): Scenario[] {
  const { orderId, userId } = benchSubjects(size)
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  return [
    {
      id: 'get-order',
      title: 'REST `GET /api/v1/orders/{id}` (owner token)',
      baselines: ['fastify'],
      fixedRate: true,
      request: () => ({ method: 'GET', path: `/api/v1/orders/${orderId}`, headers: bearer(tokens.owner), graphql: false }),
      statementBudget: { max: 'baseline', reason: 'as many round trips as the bare baseline' },
    },
    {
      id: 'list-orders',
      title: 'REST `GET /api/v1/orders?limit=20` (admin, envelope A with `page.total`)',
      baselines: ['fastify'],
      fixedRate: false,
      request: () => ({ method: 'GET', path: '/api/v1/orders?limit=20', headers: bearer(tokens.admin), graphql: false }),
      statementBudget: { max: 'baseline', reason: 'as many round trips as the bare baseline' },
    },
    {
      id: 'graphql-user-orders',
      title: 'GraphQL `user(id) { name company { name } orders(last: 10) { id total items { sku qty } } }` (owner token)',
      baselines: ['apollo', 'mercurius'],
      fixedRate: true,
      request: (server) =>
        graphql(
          server,
          tokens.owner,
          `{ user(id: "${userId}") { name company { name } orders(last: 10) { id total items { sku qty } } } }`,
        ),
      statementBudget: { max: 4, reason: 'one per nesting level: user, company, orders, items' },
    },
    {
      id: 'graphql-orders',
      title: 'GraphQL `orders(first: 50) { id user { name company { name } } items { sku } }` (admin)',
      baselines: ['apollo', 'mercurius'],
      fixedRate: false,
      request: (server) => graphql(server, tokens.admin, '{ orders(first: 50) { id user { name company { name } } items { sku } } }'),
      statementBudget: { max: 4, reason: 'one per nesting level: orders, users, companies, items' },
    },
    {
      id: 'create-order',
      title: 'REST `POST /api/v1/orders` (owner token, a fresh Idempotency-Key per request, 3 items)',
      baselines: ['fastify'],
      fixedRate: false,
      request: () => ({
        method: 'POST',
        path: '/api/v1/orders',
        headers: { ...bearer(tokens.owner), 'content-type': 'application/json' },
        body: JSON.stringify({
          items: [
            { sku: productSku(1), qty: 1 },
            { sku: productSku(2), qty: 2 },
            { sku: productSku(3), qty: 1 },
          ],
        }),
        freshIdempotencyKey: true,
        graphql: false,
      }),
      statementBudget: undefined,
    },
  ]
}

export const newIdempotencyKey = (): string => randomUUID()
