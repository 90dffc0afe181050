/**
 * The rules of users (decisions §2-§3): a user record is visible to that user and to admins;
 * listing and creating users is for admins.
 */
import type { Caller } from '../../auth/caller.ts'
import { authorize, isOwnerOrAdmin, requireOwnerOrAdmin } from '../../auth/policy.ts'
import type { CompanyRow, UserRow } from '../../db/schema.ts'
import { compileStatementWrite, type WriteOptions, type Written } from '../../db/write.ts'
import { ApiError, notFound, unprocessable } from '../../errors.ts'
import type { User } from '../../contract/contract-types.ts'
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

/**
 * A user with the related records a plan read in the same statement (GraphQL): its company when
 * asked for (null when it has none). Without `related`, nothing was read with it.
 */
export type UserWithRelated = User & { related?: { company?: Company | null } }

/**
 * Whether the caller may read a user's record: that user or an admin. The one rule for a user's
 * record however it is reached: `get`, the batch lookup of loaders, and a user read with its order.
 */
export function mayReadUser(caller: Caller, userId: number): boolean {
  return isOwnerOrAdmin(caller, userId)
}

/**
 * users.get's rule, before anything is read: the scopes the contracts require, then ownership
 * (whether another user's id exists is not the caller's business).
 */
export function requireUserReadable(caller: Caller, userId: number): void {
  authorize(caller, 'getUser')
  requireOwnerOrAdmin(caller, userId, 'user record')
}

/** A user as read with its relations, or null when the row names no user (an order's missing owner). */
export function toUserWithRelated(row: Partial<repository.UserWithRelatedRow>): UserWithRelated | null {
  if (row.user__id == null || row.user__name == null || row.user__created_at == null) return null
  const user: UserWithRelated = {
    id: row.user__id,
    name: row.user__name,
    company_id: row.user__company_id ?? null,
    created_at: row.user__created_at,
  }
  if (row.user__company_name !== undefined) {
    const companyId = user.company_id
    user.related = {
      company: companyId === null || row.user__company_name === null ? null : { id: companyId, name: row.user__company_name },
    }
  }
  return user
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

export function createUsersService({
  db,
  statements,
  cursors,
  commands,
}: Pick<ServiceDependencies, 'db' | 'statements' | 'cursors' | 'commands'>) {
  /** A new user, in one statement; the one refusal is a company that does not exist. */
  const createUser = compileStatementWrite<repository.NewUser, repository.NewUserRow, User>(
    statements,
    {
      ...repository.newUserStatement,
      refusalOf: (row, user) =>
        row.company_known || user.companyId === null
          ? undefined
          : unprocessable('UNKNOWN_COMPANY', `Company ${user.companyId} does not exist.`, [
              { in: 'body', name: '/company_id', message: `no company has id ${user.companyId}` },
            ]),
    },
    'creation',
  )
  return {
    /** A user, with the relations asked for read in the same statement. */
    async get(caller: Caller, id: number, relations: repository.UserRelations = {}): Promise<UserWithRelated> {
      requireUserReadable(caller, id)
      const row = await repository.findUserWithRelated(db, id, relations)
      const user = row && toUserWithRelated(row)
      if (!user) throw notFound(`User ${id}`)
      return user
    },

    /**
     * `get` for many ids in one statement (GraphQL's `nodes`): each id answers what `get` answers,
     * the user or its 403 (another user's record, refused before it is read); a missing user is
     * absent from the map.
     */
    async getMany(caller: Caller, ids: readonly number[]): Promise<Map<number, User | ApiError>> {
      const answers = new Map<number, User | ApiError>()
      const readable: number[] = []
      for (const id of ids) {
        try {
          requireOwnerOrAdmin(caller, id, 'user record')
          readable.push(id)
        } catch (error) {
          if (!(error instanceof ApiError)) throw error
          answers.set(id, error)
        }
      }
      for (const row of await repository.findUsersByIds(db, readable)) answers.set(row.id, toUser(row))
      return answers
    },

    /**
     * A page of users (admin), with the relations asked for read in the same statement, and when
     * asked every user's count too (envelope A's `page.total`, GraphQL's totalCount); a list that
     * shows none carries the page's length.
     */
    async list(
      caller: Caller,
      query: { cursor?: string | undefined; limit: number },
      needs: { total: boolean; relations?: repository.UserRelations } = { total: true },
    ): Promise<Page<UserWithRelated>> {
      authorize(caller, 'listUsers')
      const afterId = query.cursor === undefined ? undefined : cursors.decode(query.cursor, 'users').key[1]
      const { rows, total } = await repository.findUserPageWithRelated(db, { afterId, limit: query.limit }, needs.relations ?? {}, {
        withTotal: needs.total,
      })
      // Every row of a page names a user.
      const users = rows.flatMap((row) => toUserWithRelated(row) ?? [])
      const page = cutPage(users, query.limit, (user) => this.cursorOf(user))
      return { data: page.rows, total: total ?? page.rows.length, nextCursor: page.nextCursor, cursors: page.cursors }
    },

    async create(
      caller: Caller,
      input: { name: string; company_id?: number | null | undefined },
      options: WriteOptions = {},
    ): Promise<Written<User>> {
      commands.check('UserCreate', input)
      authorize(caller, 'createUser')
      return createUser(options.idempotency, { name: input.name, companyId: input.company_id ?? null })
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
        ids.filter((id) => mayReadUser(caller, id)),
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
