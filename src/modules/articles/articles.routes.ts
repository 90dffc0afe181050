/** REST handlers for articles and comments, by operationId. */
import type { AppConfig } from '../../config.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'
import { answerWrite, baseUrl, caller, ifMatch, sendCollection, sendNestedCollection, sendRecord } from '../../http/rest.ts'
import type { Article, Comment } from '../../contract-types.ts'
import type { ArticlesService } from './articles.service.ts'

type IdParams = { id: number }
type ArticleBody = { title?: string; body?: string }

export function articleHandlers(articles: ArticlesService, config: AppConfig): OperationHandlers {
  const location = (request: Parameters<typeof baseUrl>[0], path: string) => `${baseUrl(request, config.publicUrl)}/api/v1/${path}`

  const update: NonNullable<OperationHandlers['updateArticle']> = async (request, reply) => {
    const { id } = request.params as IdParams
    const body = request.body as ArticleBody
    const article = await articles.update(caller(request), id, { title: body.title, body: body.body }, ifMatch(request))
    return sendRecord(reply, article)
  }

  return {
    listArticles: async (request, reply) => {
      const query = request.query as { sort?: string; cursor?: string; limit: number; fields?: string }
      const page = await articles.list(caller(request), { sort: query.sort, cursor: query.cursor, limit: query.limit })
      return sendCollection(request, reply, config.publicUrl, page, query.fields)
    },

    createArticle: async (request, reply) => {
      const body = request.body as Required<ArticleBody>
      return answerWrite<Article>(request, reply, (idempotency) => articles.create(caller(request), body, { idempotency }), {
        status: 201,
        location: (article) => location(request, `articles/${article.id}`),
      })
    },

    getArticle: async (request, reply) => {
      const { id } = request.params as IdParams
      const article = await articles.get(caller(request), id)
      return sendRecord(reply, article, (request.query as { fields?: string }).fields)
    },

    // PUT and PATCH differ only in what the contract requires of the body.
    replaceArticle: update,
    updateArticle: update,

    deleteArticle: async (request, reply) => {
      const { id } = request.params as IdParams
      await articles.remove(caller(request), id, ifMatch(request))
      return reply.code(204).send()
    },

    listArticleComments: async (request, reply) => {
      const { id } = request.params as IdParams
      const query = request.query as { cursor?: string; limit: number; fields?: string }
      const page = await articles.listComments(caller(request), id, { cursor: query.cursor, limit: query.limit })
      return sendNestedCollection(reply, page, query.fields)
    },

    createArticleComment: async (request, reply) => {
      const { id } = request.params as IdParams
      const body = request.body as { body: string }
      return answerWrite<Comment>(request, reply, (idempotency) => articles.addComment(caller(request), id, body, { idempotency }), {
        status: 201,
        location: () => location(request, `articles/${id}/comments`),
      })
    },
  }
}
