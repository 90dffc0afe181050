/** All SQL for users and companies. */
import { sql } from 'kysely'
import type { CompanyRow, UserRow } from '../../db/schema.ts'
import type { Executor } from '../../db/transaction.ts'
import { anyInteger } from '../../db/any-of.ts'

export async function userExists(db: Executor, id: number): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()
  return row !== undefined
}

export async function findUser(db: Executor, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findUsersByIds(db: Executor, ids: readonly number[]): Promise<UserRow[]> {
  if (ids.length === 0) return []
  return db.selectFrom('users').selectAll().where('id', '=', anyInteger(ids)).execute()
}

export async function findCompaniesByIds(db: Executor, ids: readonly number[]): Promise<CompanyRow[]> {
  if (ids.length === 0) return []
  return db.selectFrom('companies').selectAll().where('id', '=', anyInteger(ids)).execute()
}

export async function findUserPage(db: Executor, query: { afterId: number | undefined; limit: number }): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .$if(query.afterId !== undefined, (qb) => qb.where('id', '>', query.afterId!))
    .orderBy('id')
    .limit(query.limit + 1)
    .execute()
}

export async function countUsers(db: Executor): Promise<number> {
  const row = await db.selectFrom('users').select(sql<number>`count(*)`.as('count')).executeTakeFirstOrThrow()
  return Number(row.count)
}

export async function companyExists(db: Executor, id: number): Promise<boolean> {
  return (await db.selectFrom('companies').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

export async function insertUser(db: Executor, user: { name: string; companyId: number | null }): Promise<UserRow> {
  return db.insertInto('users').values({ name: user.name, company_id: user.companyId }).returningAll().executeTakeFirstOrThrow()
}
