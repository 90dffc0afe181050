/** An order as a Relay component would show it, refetchable through `node` (Order is a Node). */
import { graphql } from 'relay-runtime'

export const fragment = graphql`
  fragment OrderSummary_order on Order @refetchable(queryName: "OrderSummaryRefetchQuery") {
    id
    databaseId
    status
    total
    items {
      sku
      qty
    }
    user {
      ...UserCard_user
    }
  }
`
