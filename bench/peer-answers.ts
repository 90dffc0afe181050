/**
 * The peers' answers in the service's shape (its field names, types and order), so that the
 * harness can check, before measuring, that a peer answers the same records for the same caller as
 * the service; and the service's answer without what a peer leaves out (Platformatic's items).
 */
import { toGlobalId } from '../src/graphql/resolving/global-id.ts'
import { field, list, replaced, without } from './json.ts'

export interface PeerAnswer {
  /** The peer's answer as the service would have written it. */
  asService(json: unknown, headers: Record<string, string>): unknown
  /** The service's answer without what the peer leaves out; the whole answer when undefined. */
  serviceView?(json: unknown): unknown
}

/** Platformatic's order (camelCase, ids and bigints as strings) as the service's, without items. */
function platformaticOrder(order: unknown) {
  return {
    id: Number(field(order, 'id')),
    status: field(order, 'status'),
    total: Number(field(order, 'total')),
    user_id: Number(field(order, 'userId')),
    created_at: field(order, 'createdAt'),
    updated_at: field(order, 'updatedAt'),
  }
}

/** A PostGraphile connection's nodes. */
const nodes = (connection: unknown): unknown[] => list(field(connection, 'nodes'))
/**
 * A peer's order row id as the service's GraphQL order `id`: its global id (decisions §13), made
 * from the row id the peer answered, so the ids are still compared record for record. PostGraphile's
 * own `id` is its global id, in its own encoding; its `rowId` is the row's.
 */
const orderId = (rowId: unknown): string => toGlobalId('Order', Number(rowId))
const graphqlId = (row: unknown): string => orderId(field(row, 'rowId'))

/** The service's `user` answer from a peer's user record, whose company is under `companyField`. */
const serviceUser = (user: unknown, companyField: string, orders: unknown[]) => ({
  data: { user: { name: field(user, 'name'), company: field(user, companyField), orders } },
})

export const PEER_ANSWERS = {
  'get-order': {
    platformatic: {
      asService: (json) => platformaticOrder(json),
      serviceView: (json) => without(json, 'items'),
    },
  },
  'list-orders': {
    platformatic: {
      // No next-page link or cursor (its `totalCount` gives the total, in a header).
      asService: (json, headers) => ({
        data: list(json).map(platformaticOrder),
        page: { next: null, cursor: null, total: Number(headers['x-total-count']) },
      }),
      serviceView: (json) => ({
        data: without(field(json, 'data'), 'items'),
        page: { next: null, cursor: null, total: field(field(json, 'page'), 'total') },
      }),
    },
  },
  'graphql-user-orders': {
    postgraphile: {
      asService: (json) => {
        const user = field(field(json, 'data'), 'userByRowId')
        const orders = nodes(field(user, 'ordersByUserId')).map((order) => ({
          id: graphqlId(order),
          total: Number(field(order, 'total')),
          items: nodes(field(order, 'orderItemsByOrderId')),
        }))
        return serviceUser(user, 'companyByCompanyId', orders)
      },
    },
    platformatic: {
      // Its relation sorts and limits but has no `last`: the newest 10, newest first, reversed here.
      asService: (json) => {
        const user = field(field(json, 'data'), 'getUserById')
        const orders = list(field(user, 'orders')).map((order) => ({
          id: orderId(field(order, 'id')),
          total: Number(field(order, 'total')),
        }))
        return serviceUser(user, 'company', orders.reverse())
      },
      serviceView: (json) => without(json, 'items'),
    },
  },
  'graphql-orders': {
    postgraphile: {
      asService: (json) => ({
        data: {
          orders: nodes(field(field(json, 'data'), 'allOrders')).map((order) => {
            const user = field(order, 'userByUserId')
            return {
              id: graphqlId(order),
              user: { name: field(user, 'name'), company: field(user, 'companyByCompanyId') },
              items: nodes(field(order, 'orderItemsByOrderId')),
            }
          }),
        },
      }),
    },
    platformatic: {
      asService: (json) => ({
        data: { orders: list(field(field(json, 'data'), 'orders')).map((order) => replaced(order, 'id', orderId)) },
      }),
      serviceView: (json) => without(json, 'items'),
    },
  },
} satisfies Record<string, Record<string, PeerAnswer>>
