/** All SQL for articles and comments. */
import type { ArticleRow, CommentRow } from '../../db/schema.ts'
import { keysetPage } from '../../db/keyset.ts'
import { findRowsPerParent } from '../../db/rows-per-parent.ts'
import type { Executor } from '../../db/executor.ts'
import { nextUpdatedAt } from '../../db/updated-at.ts'
import { anyInteger } from '../../db/any-of.ts'
import { countedRows, readPage } from '../../db/row-counts.ts'

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

export async function insertArticle(db: Executor, article: { authorId: number; title: string; body: string }): Promise<ArticleRow> {
  return db
    .insertInto('articles')
    .values({ author_id: article.authorId, title: article.title, body: article.body })
    .returningAll()
    .executeTakeFirstOrThrow()
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

export async function insertComment(db: Executor, comment: { articleId: number; authorId: number; body: string }): Promise<CommentRow> {
  return db
    .insertInto('comments')
    .values({ article_id: comment.articleId, author_id: comment.authorId, body: comment.body })
    .returningAll()
    .executeTakeFirstOrThrow()
}
