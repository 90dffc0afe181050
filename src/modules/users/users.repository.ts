/** All SQL for users and companies. */
import { type Expression, type RawBuilder, sql } from 'kysely'
import type { CompanyRow, UserRow } from '../../db/schema.ts'
import type { Executor } from '../../db/executor.ts'
import type { StatementSteps } from '../../db/write.ts'
import { anyInteger } from '../../db/any-of.ts'
import { isoTimestamp } from '../../db/iso-timestamp.ts'
import { pageByUniqueColumn } from '../../db/keyset.ts'
import { countedRows, readPage } from '../../db/row-counts.ts'

/** What a user is read with in the same statement (GraphQL's plans): its company. */
export interface UserRelations {
  company?: boolean | undefined
}

/**
 * A user as a statement that reads it with its relations gives it, alone or beside the record
 * that refers to it (its order): created_at as the API writes it, and with the company asked for,
 * the company's name (null when the user has none). Prefixed, so that the columns can stand beside
 * another table's; all null when the user referred to does not exist.
 */
export interface UserWithRelatedRow {
  user__id: number | null
  user__name: string | null
  user__company_id: number | null
  user__created_at: string | null
  user__company_name?: string | null
}

/** The select list of a UserWithRelatedRow over `users as u`, with `companies as c` joined by companyOfUser. */
function userWithRelatedColumns(relations: UserRelations): RawBuilder<unknown> {
  const company = relations.company ? sql`, c.name as user__company_name` : sql``
  return sql`u.id as user__id, u.name as user__name, u.company_id as user__company_id, ${isoTimestamp(sql.ref('u.created_at'))} as user__created_at${company}`
}

function companyOfUser(relations: UserRelations): RawBuilder<unknown> {
  return relations.company ? sql`left join companies as c on c.id = u.company_id` : sql``
}

/**
 * The user `userId` names, with its relations, as a subquery for `left join lateral (…) as x on
 * true`: the user's columns beside each row of the outer statement (an order's owner), read
 * through the users' primary key.
 */
export function userWithRelatedOf(userId: Expression<number>, relations: UserRelations): RawBuilder<UserWithRelatedRow> {
  return sql<UserWithRelatedRow>`(select ${userWithRelatedColumns(relations)} from users as u ${companyOfUser(relations)} where u.id = ${userId})`
}

/**
 * Users with their relations by id, in one statement (the owners of a page of orders, read apart from
 * the page: decisions §13); a missing id has no row.
 */
export async function findUsersWithRelatedByIds(
  db: Executor,
  ids: readonly number[],
  relations: UserRelations,
): Promise<UserWithRelatedRow[]> {
  if (ids.length === 0) return []
  const result = await sql<UserWithRelatedRow>`
    select ${userWithRelatedColumns(relations)} from users as u ${companyOfUser(relations)} where u.id = ${anyInteger(ids)}`.execute(db)
  return result.rows
}

/** One user with its relations, in one statement. */
export async function findUserWithRelated(db: Executor, id: number, relations: UserRelations): Promise<UserWithRelatedRow | undefined> {
  const result = await sql<UserWithRelatedRow>`
    select ${userWithRelatedColumns(relations)} from users as u ${companyOfUser(relations)} where u.id = ${id}`.execute(db)
  return result.rows[0]
}

/**
 * A page of users by id (limit + 1 rows) with their relations, and with `withTotal` every user's
 * count, in one statement.
 */
export async function findUserPageWithRelated(
  db: Executor,
  query: { afterId: number | undefined; limit: number },
  relations: UserRelations,
  options: { withTotal: boolean },
): Promise<{ rows: UserWithRelatedRow[]; total: number | undefined }> {
  const page = sql<UserWithRelatedRow>`
    select ${userWithRelatedColumns(relations)} from users as u ${companyOfUser(relations)}
    ${pageByUniqueColumn('u.id', { after: query.afterId, limit: query.limit })}`
  return readPage(db, page, 'user__id', options.withTotal ? countedRows('users') : undefined)
}

export async function userExists(db: Executor, id: number): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()
  return row !== undefined
}

export async function findUsersByIds(db: Executor, ids: readonly number[]): Promise<UserRow[]> {
  if (ids.length === 0) return []
  return db.selectFrom('users').selectAll().where('id', '=', anyInteger(ids)).execute()
}

export async function findCompaniesByIds(db: Executor, ids: readonly number[]): Promise<CompanyRow[]> {
  if (ids.length === 0) return []
  return db.selectFrom('companies').selectAll().where('id', '=', anyInteger(ids)).execute()
}

/** What a new user is made of. */
export interface NewUser {
  name: string
  companyId: number | null
}

/** What the new user's statement answers besides the user: whether its company exists (or none was named). */
export interface NewUserRow {
  company_known: boolean
}

/**
 * A new user in one statement (src/db/write.ts, StatementWork): inserted when `proceeds` and its
 * company, if it names one, exists; `written`, the user as the API shows it.
 */
export const newUserStatement: StatementSteps<NewUser> = {
  steps: (user, proceeds) => sql`new_user as (
    select ${user.name}::text as name, ${user.companyId}::int as company_id
  ), company as (
    select new_user.company_id is null or exists (select from companies where companies.id = new_user.company_id) as known from new_user
  ), inserted as (
    insert into users (name, company_id) select new_user.name, new_user.company_id from new_user, company where ${proceeds} and company.known
    returning id, name, company_id, created_at
  ), written as (
    select jsonb_build_object('id', inserted.id, 'name', inserted.name, 'company_id', inserted.company_id,
      'created_at', ${isoTimestamp(sql.ref('inserted.created_at'))}) as value from inserted
  )`,
  result: 'written',
  columns: sql`(select company.known from company) as company_known`,
  parametersOf: (user) => [user.name, user.companyId],
}
