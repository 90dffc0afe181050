/** A user as a Relay component would show it, refetchable through `node` (User is a Node). */
import { graphql } from 'relay-runtime'

export const fragment = graphql`
  fragment UserCard_user on User @refetchable(queryName: "UserCardRefetchQuery") {
    id
    databaseId
    name
  }
`
