/** The caller's orders as a Relay connection, paged with `@connection` (and refetchable on Query). */
import { graphql } from 'relay-runtime'

export const fragment = graphql`
  fragment OrderList_query on Query
  @refetchable(queryName: "OrderListPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 2 }, cursor: { type: "String" }) {
    ordersConnection(first: $count, after: $cursor) @connection(key: "OrderList_ordersConnection") {
      edges {
        node {
          ...OrderSummary_order
        }
      }
    }
  }
`
