/**
 * The look-ahead of the users fields (Query.user, me, users, usersConnection, and an order's owner
 * read by an orders plan, orders.plan.ts): what a User selection needs read with each user.
 */
import type { SelectedFields } from '../../graphql/resolving/selects-field.ts'
import type { UserRelations } from './users.repository.ts'

/** What the User fields selected (`fields`) need read with each user, in its own statement: its company. */
export function userRelationsOf(fields: SelectedFields): UserRelations {
  return { company: fields.has('company') }
}
