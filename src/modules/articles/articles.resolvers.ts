/** GraphQL for articles and comments, over the articles service; related records through loaders. */
import type { Resolvers, SubscriptionCommentAddedArgs } from '../../generated/graphql/types.ts'
import type { Loaders } from '../../graphql/resolving/loaders.ts'
import { pageOf, parseCount, parseId } from '../../graphql/resolving/arguments.ts'
import { callerOf, subscriber } from '../../graphql/resolving/caller.ts'
import { idempotencyClaimOf, namedAsArguments, payloadOf } from '../../graphql/resolving/mutations.ts'
import { orNull } from '../../graphql/resolving/or-null.ts'
import type { MercuriusContext } from 'mercurius'
import mercurius from 'mercurius'
import { subscriptionError } from '../../graphql/errors.ts'
import { resolvingEvent, subscribeAfter } from '../../graphql/subscriptions/event-replay.ts'
import type { Comment } from '../../contract/contract-types.ts'
import { selectsTotalCount, toConnection } from '../../graphql/resolving/connection.ts'
import { toGlobalId } from '../../graphql/resolving/global-id.ts'
import { lookupPerSize } from '../../pagination/per-parent.ts'
import type { PageCursors } from '../../pagination/keyset-page.ts'
import type { Page } from '../../pagination/page.ts'

export const articleResolvers: Resolvers = {
  Query: {
    article: (_, args, ctx) => orNull(ctx.app.services.articles.get(callerOf(ctx), parseId(args.id, 'id', 'Article'))),
    // No total: the lists show none, and a connection reads one only when totalCount is selected.
    articles: async (_, args, ctx) => {
      const page = await ctx.app.services.articles.list(callerOf(ctx), pageOf(args), { total: false })
      return page.data.map((article, index) => ({ ...article, cursor: page.cursors![index]! }))
    },
    articlesConnection: async (_, args, ctx, info) => {
      const total = selectsTotalCount(info)
      const page = await ctx.app.services.articles.list(callerOf(ctx), pageOf(args), { total })
      return toConnection(
        { ...page, data: page.data.map((article, index) => ({ ...article, cursor: page.cursors![index]! })) },
        args.after,
        { total },
      )
    },
  },
  Mutation: {
    createArticle: (_, args, ctx) =>
      namedAsArguments(
        'input',
        payloadOf(
          ctx.app.services.articles.create(callerOf(ctx), args.input, { idempotency: idempotencyClaimOf(ctx, 'createArticle', args) }),
        ),
      ),
    updateArticle: (_, args, ctx) =>
      namedAsArguments(
        'input',
        ctx.app.services.articles.update(callerOf(ctx), parseId(args.id, 'id', 'Article'), {
          title: args.input.title ?? undefined,
          body: args.input.body ?? undefined,
        }),
      ),
    deleteArticle: async (_, args, ctx) => {
      const id = parseId(args.id, 'id', 'Article')
      await ctx.app.services.articles.remove(callerOf(ctx), id)
      return toGlobalId('Article', id)
    },
    addComment: (_, args, ctx) =>
      namedAsArguments(
        'input',
        payloadOf(
          ctx.app.services.articles.addComment(callerOf(ctx), parseId(args.articleId, 'articleId', 'Article'), args.input, {
            idempotency: idempotencyClaimOf(ctx, 'addComment', args),
          }),
        ),
      ),
  },
  Subscription: {
    commentAdded: {
      subscribe: mercurius.withFilter(
        (_root: unknown, args: SubscriptionCommentAddedArgs, ctx: MercuriusContext) => {
          try {
            subscriber(ctx)
            parseId(args.articleId, 'articleId', 'Article')
          } catch (error) {
            throw subscriptionError(error)
          }
          return subscribeAfter(ctx, 'comment.added', args.after).catch((error: unknown) => {
            throw subscriptionError(error)
          })
        },
        (payload: { articleId: number }, args: SubscriptionCommentAddedArgs) =>
          payload.articleId === parseId(args.articleId, 'articleId', 'Article'),
      ),
      resolve: resolvingEvent((payload: { comment: Comment; eventId?: string }) => payload.comment),
    },
  },
  Article: {
    createdAt: (article) => article.created_at,
    updatedAt: (article) => article.updated_at,
    cursor: (article, _, ctx) => article.cursor ?? ctx.app.services.articles.cursorOf(article),
  },
  Comment: {
    createdAt: (comment) => comment.created_at,
    cursor: (comment, _, ctx) => ctx.app.services.articles.commentCursor(comment),
  },
}

/**
 * The author of each article or comment, in one statement for the batch: the public profile only
 * (the users service decides what that is): a User is private to that user and admins.
 */
async function authorsOf(queries: ReadonlyArray<{ obj: { author_id: number } }>, ctx: MercuriusContext) {
  const found = await ctx.app.services.users.authorsByIds(callerOf(ctx), [...new Set(queries.map((q) => q.obj.author_id))])
  return queries.map(({ obj }) => found.get(obj.author_id) ?? null)
}

/**
 * The page of comments each load of Article.comments or Article.commentsConnection asks for: the
 * first pages of every article in one statement, a page `after` a cursor looked up per article
 * (the service's list checks the cursor). `cursors`: which cursors the pages make.
 */
async function commentPages(
  queries: ReadonlyArray<{ obj: { id: number }; params: { first?: number | null; after?: string | null } }>,
  ctx: MercuriusContext,
  cursors: Exclude<PageCursors, 'next'>,
): Promise<Array<Page<Comment>>> {
  const service = ctx.app.services.articles
  const firstPages = await lookupPerSize(
    queries.filter((q) => !q.params.after).map(({ obj, params }) => ({ parentId: obj.id, size: parseCount(params.first, 'first') })),
    (ids, first) => service.firstCommentPagesOfArticles(ids, first, cursors),
  )
  return Promise.all(
    queries.map(async ({ obj, params }) => {
      const first = parseCount(params.first, 'first')
      if (params.after) return service.listComments(callerOf(ctx), obj.id, { cursor: params.after, limit: first })
      return firstPages(obj.id, first) ?? { data: [], total: 0, nextCursor: null, cursors: [] }
    }),
  )
}

export const articleLoaders: Loaders = {
  Article: {
    author: authorsOf,
    /** The first N comments of each article in one statement; a page `after` a cursor is looked up per article. */
    comments: async (queries, ctx) => (await commentPages(queries, ctx, 'none')).map((page) => page.data),
    /** `comments` as a connection, batched the same way. */
    commentsConnection: async (queries, ctx) =>
      (await commentPages(queries, ctx, 'every')).map((page, index) => toConnection(page, queries[index]!.params.after)),
  },
  Comment: {
    author: authorsOf,
    article: async (queries, ctx) => {
      const articles = await ctx.app.services.articles.articlesByIds(callerOf(ctx), [...new Set(queries.map((q) => q.obj.article_id))])
      return queries.map(({ obj }) => articles.get(obj.article_id) ?? null)
    },
  },
}
