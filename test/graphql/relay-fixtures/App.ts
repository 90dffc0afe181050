/**
 * Two overlapping queries: user 2 and order 2 by their plain ids (the ids that collide in a Relay
 * store keyed by `id` unless ids are global), and the caller with a page of its orders.
 */
import { graphql } from 'relay-runtime'

export const userAndOrder = graphql`
  query AppUserAndOrderQuery($userId: ID!, $orderId: ID!) {
    user(id: $userId) {
      ...UserCard_user
    }
    order(id: $orderId) {
      ...OrderSummary_order
    }
  }
`

export const ordersPage = graphql`
  query AppOrdersQuery {
    me {
      ...UserCard_user
    }
    ...OrderList_query
  }
`
