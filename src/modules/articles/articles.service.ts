/**
 * The rules of articles and comments (decisions §2-§3, §11): any valid token reads them; writing
 * needs articles:write; an article is changed or deleted by its author or an admin. Creations
 * record their outbox event in the same statement (decisions §7, "A write in one statement").
 */
import type { Caller } from '../../auth/caller.ts'
import { authorize, requireOwnerOrAdmin } from '../../auth/policy.ts'
import type { ServiceOperation } from '../../generated/required-scopes.ts'
import type { ArticleRow, CommentRow } from '../../db/schema.ts'
import type { Executor } from '../../db/executor.ts'
import { compileStatementWrite, runWrite, type WriteOptions, type Written } from '../../db/write.ts'
import { notFound, unprocessable } from '../../errors.ts'
import type { Article, Comment } from '../../contract/contract-types.ts'
import { cutPage, type PageCursors, sortKeyOf, startOfPage } from '../../pagination/keyset-page.ts'
import type { Page } from '../../pagination/page.ts'
import { groupOldestFirst } from '../../pagination/per-parent.ts'
import type { ServiceDependencies } from '../service-dependencies.ts'
import { cacheReferences } from '../../cache-references.ts'
import * as repository from './articles.repository.ts'

export const ARTICLE_SORT_FIELDS = ['created_at', 'title', 'id'] as const
export const DEFAULT_ARTICLE_SORT = '-created_at'

export function toArticle(row: ArticleRow): Article {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    author_id: row.author_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

export function toComment(row: CommentRow): Comment {
  return { id: row.id, article_id: row.article_id, author_id: row.author_id, body: row.body, created_at: row.created_at.toISOString() }
}

export function createArticlesService({ db, statements, cursors, commands, invalidate }: ServiceDependencies) {
  /** An article the caller may change as `operation` (updateArticle or deleteArticle), locked for the transaction. */
  async function loadWritable(executor: Executor, caller: Caller, id: number, operation: ServiceOperation): Promise<ArticleRow> {
    authorize(caller, operation)
    const row = await repository.findArticle(executor, id, { lock: true })
    if (!row) throw notFound(`Article ${id}`)
    requireOwnerOrAdmin(caller, row.author_id, 'article')
    return row
  }

  /** The refusal of a write by an author who is no user (the token's subject, since deleted or never one). */
  const unknownAuthor = (authorId: number) => unprocessable('UNKNOWN_USER', `The token's subject, user ${authorId}, does not exist.`)

  /** A new article, in one statement: refused when its author is no user. */
  const createArticle = compileStatementWrite<repository.NewArticle, repository.NewArticleRow, Article>(
    statements,
    {
      ...repository.newArticleStatement,
      refusalOf: (row, article) => (row.author_exists ? undefined : unknownAuthor(article.authorId)),
      afterCommit: () => invalidate([cacheReferences.articles]),
    },
    'creation',
  )

  /** A new comment, in one statement: refused when its article does not exist (404), then when its author is no user. */
  const addComment = compileStatementWrite<repository.NewComment, repository.NewCommentRow, Comment>(
    statements,
    {
      ...repository.newCommentStatement,
      refusalOf(row, comment) {
        if (!row.article_exists) return notFound(`Article ${comment.articleId}`)
        return row.author_exists ? undefined : unknownAuthor(comment.authorId)
      },
    },
    'creation',
  )

  const commentCursor = (comment: Comment) =>
    cursors.encode({
      list: `articles/${comment.article_id}/comments`,
      sort: 'created_at',
      filter: {},
      key: [comment.created_at, comment.id],
    })

  return {
    /**
     * A page of articles, and when asked every article's count in the same statement (envelope A's
     * `page.total`, GraphQL's totalCount), else the page's length.
     */
    async list(
      caller: Caller,
      query: { sort?: string | undefined; cursor?: string | undefined; limit: number },
      needs: { total: boolean } = { total: true },
    ): Promise<Page<Article>> {
      authorize(caller, 'listArticles')
      const position = startOfPage(
        cursors,
        'articles',
        query.cursor,
        { sort: query.sort, filter: {} },
        { sort: DEFAULT_ARTICLE_SORT, fields: ARTICLE_SORT_FIELDS },
      )
      const { rows, total } = await repository.findArticlePage(
        db,
        { sort: position.sortBy, after: position.after, limit: query.limit },
        { withTotal: needs.total },
      )
      const page = cutPage(rows, query.limit, (row) =>
        cursors.encode({ list: 'articles', sort: position.sort, filter: {}, key: [sortKeyOf(row, position.sortBy.field), row.id] }),
      )
      return { data: page.rows.map(toArticle), total: total ?? page.rows.length, nextCursor: page.nextCursor, cursors: page.cursors }
    },

    async get(caller: Caller, id: number): Promise<Article> {
      authorize(caller, 'getArticle')
      const row = await repository.findArticle(db, id)
      if (!row) throw notFound(`Article ${id}`)
      return toArticle(row)
    },

    /** An article's position in the default list (newest first). */
    cursorOf(article: Article): string {
      return cursors.encode({ list: 'articles', sort: DEFAULT_ARTICLE_SORT, filter: {}, key: [article.created_at, article.id] })
    },

    async create(caller: Caller, input: { title: string; body: string }, options: WriteOptions = {}): Promise<Written<Article>> {
      commands.check('ArticleCreate', input)
      authorize(caller, 'createArticle')
      return createArticle(options.idempotency, { authorId: caller.userId, title: input.title, body: input.body })
    },

    /** PUT (both fields) and PATCH (either): by the author or an admin. */
    async update(
      caller: Caller,
      id: number,
      changes: { title?: string | undefined; body?: string | undefined },
      precondition?: (current: Article) => void,
    ): Promise<Article> {
      commands.check('ArticleUpdate', changes)
      const { value } = await runWrite(db, undefined, {
        async check(trx) {
          const row = await loadWritable(trx, caller, id, 'updateArticle')
          precondition?.(toArticle(row))
          return row
        },
        async write({ trx, afterCommit }, row) {
          const set = {
            ...(changes.title !== undefined ? { title: changes.title } : {}),
            ...(changes.body !== undefined ? { body: changes.body } : {}),
          }
          if (Object.keys(set).length === 0) return toArticle(row)
          afterCommit(() => invalidate([cacheReferences.articles, cacheReferences.article(id)]))
          return toArticle(await repository.updateArticle(trx, id, set))
        },
      })
      return value
    },

    async remove(caller: Caller, id: number, precondition?: (current: Article) => void): Promise<void> {
      await runWrite(db, undefined, {
        async check(trx) {
          const row = await loadWritable(trx, caller, id, 'deleteArticle')
          precondition?.(toArticle(row))
        },
        async write({ trx, afterCommit }) {
          await repository.deleteArticle(trx, id)
          afterCommit(() => invalidate([cacheReferences.articles, cacheReferences.article(id)]))
        },
      })
    },

    async listComments(_caller: Caller, articleId: number, query: { cursor?: string | undefined; limit: number }): Promise<Page<Comment>> {
      if (!(await repository.findArticle(db, articleId))) throw notFound(`Article ${articleId}`)
      const list = `articles/${articleId}/comments`
      const after = query.cursor === undefined ? undefined : (cursors.decode(query.cursor, list).key as [string, number])
      const rows = await repository.findCommentPage(db, { articleId, after, limit: query.limit })
      const page = cutPage(rows.map(toComment), query.limit, commentCursor)
      return { data: page.rows, total: page.rows.length, nextCursor: page.nextCursor, cursors: page.cursors }
    },

    commentCursor,

    async addComment(caller: Caller, articleId: number, input: { body: string }, options: WriteOptions = {}): Promise<Written<Comment>> {
      commands.check('CommentCreate', input)
      authorize(caller, 'createArticleComment')
      return addComment(options.idempotency, { articleId, authorId: caller.userId, body: input.body })
    },

    /** Batch lookups for GraphQL loaders: any valid token reads articles, as with `get`. */
    async articlesByIds(_caller: Caller, ids: readonly number[]): Promise<Map<number, Article>> {
      const rows = await repository.findArticlesByIds(db, ids)
      return new Map(rows.map((row) => [row.id, toArticle(row)]))
    },

    /** Comments by id (GraphQL's `nodes`): any valid token reads comments, as it reads articles. */
    async commentsByIds(_caller: Caller, ids: readonly number[]): Promise<Map<number, Comment>> {
      const rows = await repository.findCommentsByIds(db, ids)
      return new Map(rows.map((row) => [row.id, toComment(row)]))
    },

    async firstCommentsOfArticles(ids: readonly number[], first: number): Promise<Map<number, Comment[]>> {
      const rows = await repository.findFirstCommentsOfArticles(db, ids, first)
      return groupOldestFirst(ids, rows.map(toComment), (comment) => comment.article_id)
    },

    /** The first page of comments of each article, with the cursors asked for and whether more follow, in one statement. */
    async firstCommentPagesOfArticles(
      ids: readonly number[],
      first: number,
      cursors: PageCursors = 'every',
    ): Promise<Map<number, Page<Comment>>> {
      const lists = await this.firstCommentsOfArticles(ids, first + 1)
      return new Map(
        [...lists].map(([id, comments]) => {
          const page = cutPage(comments, first, commentCursor, cursors)
          return [
            id,
            { data: page.rows, total: page.rows.length, nextCursor: page.nextCursor, ...(page.cursors ? { cursors: page.cursors } : {}) },
          ]
        }),
      )
    },
  }
}

export type ArticlesService = ReturnType<typeof createArticlesService>
