/** All SQL for users and companies. */
import { type Expression, type RawBuilder, sql } from 'kysely'
import type { CompanyRow, UserRow } from '../../db/schema.ts'
import type { Executor } from '../../db/executor.ts'
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

export async function companyExists(db: Executor, id: number): Promise<boolean> {
  return (await db.selectFrom('companies').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

export async function insertUser(db: Executor, user: { name: string; companyId: number | null }): Promise<UserRow> {
  return db.insertInto('users').values({ name: user.name, company_id: user.companyId }).returningAll().executeTakeFirstOrThrow()
}
