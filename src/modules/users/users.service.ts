/**
 * The rules of users (decisions §2-§3): a user record is visible to that user and to admins;
 * listing and creating users is for admins.
 */
import type { Caller } from '../../auth/caller.ts'
import { isOwnerOrAdmin, requireAdmin, requireOwnerOrAdmin } from '../../auth/policy.ts'
import type { CompanyRow, UserRow } from '../../db/schema.ts'
import { runWrite, type WriteOptions, type Written } from '../../db/transaction.ts'
import { notFound, unprocessable } from '../../errors.ts'
import type { User } from '../../contract-types.ts'
import { cutPage } from '../../pagination/keyset-page.ts'
import type { Page } from '../../pagination/page.ts'
import type { ServiceDependencies } from '../service-dependencies.ts'
import * as repository from './users.repository.ts'

export interface Company {
  id: number
  name: string
}

export interface Author {
  id: number
  name: string
}

export function toUser(row: UserRow): User {
  return { id: row.id, name: row.name, company_id: row.company_id, created_at: row.created_at.toISOString() }
}

/** The public profile of a user, as articles and comments show their author. */
export function toAuthor(row: UserRow): Author {
  return { id: row.id, name: row.name }
}

export function toCompany(row: CompanyRow): Company {
  return { id: row.id, name: row.name }
}

export function createUsersService({ db, cursors, commands }: Pick<ServiceDependencies, 'db' | 'cursors' | 'commands'>) {
  return {
    async get(caller: Caller, id: number): Promise<User> {
      // Ownership first: whether another user's id exists is not the caller's business.
      requireOwnerOrAdmin(caller, id, 'user record')
      const row = await repository.findUser(db, id)
      if (!row) throw notFound(`User ${id}`)
      return toUser(row)
    },

    async list(caller: Caller, query: { cursor?: string | undefined; limit: number }): Promise<Page<User>> {
      requireAdmin(caller)
      const afterId = query.cursor === undefined ? undefined : cursors.decode(query.cursor, 'users').key[1]
      const [rows, total] = await Promise.all([repository.findUserPage(db, { afterId, limit: query.limit }), repository.countUsers(db)])
      const page = cutPage(rows.map(toUser), query.limit, (user) => this.cursorOf(user))
      return { data: page.rows, total, nextCursor: page.nextCursor, cursors: page.cursors }
    },

    async create(
      caller: Caller,
      input: { name: string; company_id?: number | null | undefined },
      options: WriteOptions<User> = {},
    ): Promise<Written<User>> {
      commands.check('UserCreate', input)
      requireAdmin(caller)
      return runWrite(db, options.idempotency, async ({ trx }) => {
        const companyId = input.company_id ?? null
        if (companyId !== null && !(await repository.companyExists(trx, companyId))) {
          throw unprocessable('UNKNOWN_COMPANY', `Company ${companyId} does not exist.`, [
            { in: 'body', name: '/company_id', message: `no company has id ${companyId}` },
          ])
        }
        return toUser(await repository.insertUser(trx, { name: input.name, companyId }))
      })
    },

    /** A user's position in the users list (ordered by id). */
    cursorOf(user: User): string {
      return cursors.encode({ list: 'users', sort: 'id', filter: {}, key: [user.id, user.id] })
    },

    /**
     * Batch lookups for GraphQL loaders: one statement for any number of ids. As with `get`, a user
     * record is the caller's own or an admin's to read; the others are left out.
     */
    async usersByIds(caller: Caller, ids: readonly number[]): Promise<Map<number, User>> {
      const rows = await repository.findUsersByIds(
        db,
        ids.filter((id) => isOwnerOrAdmin(caller, id)),
      )
      return new Map(rows.map((row) => [row.id, toUser(row)]))
    },

    /** The public profiles of authors: whoever may read an article or comment may know who wrote it. */
    async authorsByIds(_caller: Caller, ids: readonly number[]): Promise<Map<number, Author>> {
      const rows = await repository.findUsersByIds(db, ids)
      return new Map(rows.map((row) => [row.id, toAuthor(row)]))
    },

    /**
     * Companies by id: a company's record (its name) is directory data any caller may read; the
     * caller is taken so that every entry point names whom it serves.
     */
    async companiesByIds(_caller: Caller, ids: readonly number[]): Promise<Map<number, Company>> {
      const rows = await repository.findCompaniesByIds(db, ids)
      return new Map(rows.map((row) => [row.id, toCompany(row)]))
    },
  }
}

export type UsersService = ReturnType<typeof createUsersService>
