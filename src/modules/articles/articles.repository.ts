/** All SQL for articles and comments. */
import { type RawBuilder, sql } from 'kysely'
import type { ArticleRow, CommentRow } from '../../db/schema.ts'
import { keysetPage } from '../../db/keyset.ts'
import { findRowsPerParent } from '../../db/rows-per-parent.ts'
import type { Executor } from '../../db/executor.ts'
import { nextUpdatedAt } from '../../db/updated-at.ts'
import { anyInteger } from '../../db/any-of.ts'
import { countedRows, readPage } from '../../db/row-counts.ts'
import { isoTimestamp } from '../../db/iso-timestamp.ts'
import { eventRecordFrom, wakeRelaysAfter } from '../../db/repositories/outbox.ts'
import type { StatementSteps } from '../../db/write.ts'

export type ArticleSortField = 'created_at' | 'title' | 'id'

export async function findArticle(db: Executor, id: number, options: { lock?: boolean } = {}): Promise<ArticleRow | undefined> {
  let query = db.selectFrom('articles').selectAll().where('id', '=', id)
  if (options.lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export async function findArticlesByIds(db: Executor, ids: readonly number[]): Promise<ArticleRow[]> {
  if (ids.length === 0) return []
  return db.selectFrom('articles').selectAll().where('id', '=', anyInteger(ids)).execute()
}

export async function findCommentsByIds(db: Executor, ids: readonly number[]): Promise<CommentRow[]> {
  if (ids.length === 0) return []
  return db.selectFrom('comments').selectAll().where('id', '=', anyInteger(ids)).execute()
}

/** One keyset page (limit + 1 rows), and with `withTotal` every article's count, read in the same statement. */
export async function findArticlePage(
  db: Executor,
  query: { sort: { field: ArticleSortField; descending: boolean }; after: [string | number, number] | undefined; limit: number },
  options: { withTotal: boolean },
): Promise<{ rows: ArticleRow[]; total: number | undefined }> {
  return readPage(
    db,
    keysetPage(db.selectFrom('articles').selectAll(), query),
    'id',
    options.withTotal ? countedRows('articles') : undefined,
  )
}

/** What a new article is made of. */
export interface NewArticle {
  authorId: number
  title: string
  body: string
}

/** What the new article's statement answers besides the article: whether its author exists. */
export interface NewArticleRow {
  author_exists: boolean
}

/** `author`, whether the user `authorId` (an expression over the steps before) exists: a new article's or comment's check. */
const authorStep = (authorId: RawBuilder<number>) =>
  sql`author as (select exists (select from users where users.id = ${authorId}) as known)`

/**
 * A new article in one statement (src/db/write.ts, StatementWork): inserted when `proceeds` and its
 * author exists; `written`, the article as the API shows it; its `article.created` event, which
 * any valid token may read, made from it, the relays woken when it was recorded.
 */
export const newArticleStatement: StatementSteps<NewArticle> = {
  steps: (article, proceeds) => sql`new_article as (
    select ${article.authorId}::int as author_id, ${article.title}::text as title, ${article.body}::text as body
  ), ${authorStep(sql`(select new_article.author_id from new_article)`)}, inserted as (
    insert into articles (author_id, title, body) select new_article.author_id, new_article.title, new_article.body
    from new_article, author where ${proceeds} and author.known
    returning id, title, body, author_id, created_at, updated_at
  ), written as (
    select inserted.id, inserted.author_id, jsonb_build_object('id', inserted.id, 'title', inserted.title, 'body', inserted.body,
      'author_id', inserted.author_id, 'created_at', ${isoTimestamp(sql.ref('inserted.created_at'))},
      'updated_at', ${isoTimestamp(sql.ref('inserted.updated_at'))}) as value
    from inserted
  ), recorded as (
    ${eventRecordFrom(
      'article.created',
      // The event log serves the article as it was created (src/modules/events).
      sql`jsonb_build_object('articleId', written.id, 'authorId', written.author_id, 'article', written.value)`,
      sql<null>`null::int`,
      sql`written`,
    )}
  )`,
  result: 'written',
  columns: sql`(select author.known from author) as author_exists, (${wakeRelaysAfter('recorded')}) as notified`,
  parametersOf: (article) => [article.authorId, article.title, article.body, 'article.created'],
}

export async function updateArticle(db: Executor, id: number, changes: { title?: string; body?: string }): Promise<ArticleRow> {
  return db
    .updateTable('articles')
    .set({ ...changes, updated_at: nextUpdatedAt() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function deleteArticle(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('articles').where('id', '=', id).execute()
}

/** A page of one article's comments, oldest first (limit + 1 rows). */
export async function findCommentPage(
  db: Executor,
  query: { articleId: number; after: [string, number] | undefined; limit: number },
): Promise<CommentRow[]> {
  const ofArticle = db.selectFrom('comments').selectAll().where('article_id', '=', query.articleId)
  return keysetPage(ofArticle, { sort: { field: 'created_at', descending: false }, after: query.after, limit: query.limit }).execute()
}

/** The first `first` comments of each article, oldest first, in one statement. */
export async function findFirstCommentsOfArticles(db: Executor, articleIds: readonly number[], first: number): Promise<CommentRow[]> {
  return findRowsPerParent<'comments', CommentRow>(db, {
    table: 'comments',
    parentColumn: 'article_id',
    parentIds: articleIds,
    newestFirst: false,
    limit: first,
  })
}

/** What a new comment is made of. */
export interface NewComment {
  articleId: number
  authorId: number
  body: string
}

/** What the new comment's statement answers besides the comment: whether its article and its author exist. */
export interface NewCommentRow {
  article_exists: boolean
  author_exists: boolean
}

/**
 * A new comment in one statement (src/db/write.ts, StatementWork): inserted when `proceeds`, its
 * article exists and its author exists; `written`, the comment as the API shows it; its
 * `comment.added` event, which any valid token may read, made from it, the relays woken when it
 * was recorded.
 */
export const newCommentStatement: StatementSteps<NewComment> = {
  steps: (comment, proceeds) => sql`new_comment as (
    select ${comment.articleId}::int as article_id, ${comment.authorId}::int as author_id, ${comment.body}::text as body
  ), article as (
    select exists (select from articles, new_comment where articles.id = new_comment.article_id) as known
  ), ${authorStep(sql`(select new_comment.author_id from new_comment)`)}, inserted as (
    insert into comments (article_id, author_id, body) select new_comment.article_id, new_comment.author_id, new_comment.body
    from new_comment, article, author where ${proceeds} and article.known and author.known
    returning id, article_id, author_id, body, created_at
  ), written as (
    select inserted.id, inserted.article_id, inserted.author_id, jsonb_build_object('id', inserted.id,
      'article_id', inserted.article_id, 'author_id', inserted.author_id, 'body', inserted.body,
      'created_at', ${isoTimestamp(sql.ref('inserted.created_at'))}) as value
    from inserted
  ), recorded as (
    ${eventRecordFrom(
      'comment.added',
      sql`jsonb_build_object('commentId', written.id, 'articleId', written.article_id, 'authorId', written.author_id, 'comment', written.value)`,
      sql<null>`null::int`,
      sql`written`,
    )}
  )`,
  result: 'written',
  columns: sql`(select article.known from article) as article_exists, (select author.known from author) as author_exists,
    (${wakeRelaysAfter('recorded')}) as notified`,
  parametersOf: (comment) => [comment.articleId, comment.authorId, comment.body, 'comment.added'],
}
