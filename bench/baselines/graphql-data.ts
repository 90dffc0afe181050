/**
 * What the two GraphQL baselines share: the part of the schema the bench queries, the rules the
 * service applies to it (the same authorization and argument bounds), and one batched statement
 * per relation (`= any($1)`), which each baseline calls through its own loaders.
 */
import { GraphQLError } from 'graphql'
import { type BaselineCaller, hasScope } from './auth.ts'
import type { SqlClient } from './sql-client.ts'

export const typeDefs = /* GraphQL */ `
  type Query {
    user(id: ID!): User
    orders(first: Int = 20): [Order!]!
  }
  type User {
    id: ID!
    name: String!
    company: Company
    orders(last: Int): [Order!]!
  }
  type Company {
    id: ID!
    name: String!
  }
  type Order {
    id: ID!
    status: String!
    total: Int!
    user: User!
    items: [Item!]!
  }
  type Item {
    sku: String!
    qty: Int!
    unitPrice: Int!
  }
`

export type UserRow = { id: number; name: string; company_id: number | null }
export type CompanyRow = { id: number; name: string }
export type OrderRow = { id: number; user_id: number; status: string; total: number }
export type ItemRow = { order_id: number; sku: string; qty: number; unitPrice: number }

export interface GraphqlContextBase {
  caller: BaselineCaller | null
}

function refuse(message: string, code: string): never {
  throw new GraphQLError(message, { extensions: { code } })
}

export function requireCaller(caller: BaselineCaller | null): BaselineCaller {
  return caller ?? refuse('A bearer token is required.', 'UNAUTHENTICATED')
}

export function requireOrdersRead(caller: BaselineCaller | null): BaselineCaller {
  const known = requireCaller(caller)
  if (!hasScope(known, 'orders:read')) refuse('This operation needs the orders:read scope.', 'FORBIDDEN')
  return known
}

export function requireUserReadable(caller: BaselineCaller | null, userId: number): void {
  const known = requireCaller(caller)
  if (!known.admin && known.userId !== userId) refuse("You may not access another user's record.", 'FORBIDDEN')
}

export function pageSize(value: number | null | undefined, fallback: number, name: string): number {
  const size = value ?? fallback
  if (!Number.isInteger(size) || size < 1 || size > 100) refuse(`${name} must be between 1 and 100.`, 'BAD_USER_INPUT')
  return size
}

function group<K, V>(rows: readonly V[], key: (row: V) => K): Map<K, V[]> {
  const groups = new Map<K, V[]>()
  for (const row of rows) {
    const list = groups.get(key(row))
    if (list) list.push(row)
    else groups.set(key(row), [row])
  }
  return groups
}

export function createBatches(sql: SqlClient) {
  return {
    async usersByIds(ids: readonly number[]): Promise<Array<UserRow | null>> {
      const rows = await sql.query<UserRow>('select id, name, company_id from users where id = any($1::int[])', [ids])
      const byId = new Map(rows.map((row) => [row.id, row]))
      return ids.map((id) => byId.get(id) ?? null)
    },
    async companiesByIds(ids: readonly number[]): Promise<Array<CompanyRow | null>> {
      const rows = await sql.query<CompanyRow>('select id, name from companies where id = any($1::int[])', [ids])
      const byId = new Map(rows.map((row) => [row.id, row]))
      return ids.map((id) => byId.get(id) ?? null)
    },
    /** Each user's `last` most recent orders, oldest of them first, in one statement. */
    async recentOrdersOfUsers(userIds: readonly number[], last: number): Promise<OrderRow[][]> {
      const rows = await sql.query<OrderRow>(
        `select o.id, o.user_id, o.status, o.total::int as total from unnest($1::int[]) as u(id)
         cross join lateral (select * from orders where orders.user_id = u.id order by created_at desc, id desc limit $2) o`,
        [userIds, last],
      )
      const byUser = group(rows, (row) => row.user_id)
      return userIds.map((id) => (byUser.get(id) ?? []).reverse())
    },
    async itemsOfOrders(orderIds: readonly number[]): Promise<ItemRow[][]> {
      const rows = await sql.query<ItemRow>(
        `select order_id, sku, qty, unit_price as "unitPrice" from order_items
         where order_id = any($1::int[]) order by order_id, position`,
        [orderIds],
      )
      const byOrder = group(rows, (row) => row.order_id)
      return orderIds.map((id) => byOrder.get(id) ?? [])
    },
    /** The newest `first` orders: everyone's for an admin, else the caller's own. */
    orderPage(first: number, userId: number | null): Promise<OrderRow[]> {
      return sql.query<OrderRow>(
        `select id, user_id, status, total::int as total from orders where $2::int is null or user_id = $2::int
         order by created_at desc, id desc limit $1`,
        [first, userId],
      )
    },
  }
}

export type Batches = ReturnType<typeof createBatches>
