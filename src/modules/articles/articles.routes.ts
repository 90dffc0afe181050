/** REST handlers for articles and comments, by operationId. */
import type { AppConfig } from '../../config.ts'
import { ifMatch } from '../../http/conditional-requests.ts'
import { sendCollection, sendNestedCollection, sendRecord } from '../../http/envelopes.ts'
import { operationUrl } from '../../http/locations.ts'
import type { OperationHandler, OperationHandlers } from '../../http/register-operations.ts'
import { answerWritten, idempotencyClaim } from '../../http/write-answers.ts'
import { requireCaller } from '../../auth/caller.ts'
import type { ArticlesService } from './articles.service.ts'

export function articleHandlers(articles: ArticlesService, config: AppConfig): OperationHandlers {
  // PUT and PATCH differ only in what the contract requires of the body.
  const update: OperationHandler<'updateArticle'> = async (request, reply) => {
    const { title, body } = request.body
    const article = await articles.update(requireCaller(request), request.params.id, { title, body }, ifMatch(request))
    return sendRecord(reply, article)
  }

  return {
    listArticles: async (request, reply) => {
      const { sort, cursor, limit, fields } = request.query
      const page = await articles.list(requireCaller(request), { sort, cursor, limit })
      return sendCollection(request, reply, config.publicUrl, page, fields)
    },

    createArticle: async (request, reply) => {
      const idempotency = idempotencyClaim(request)
      const written = await articles.create(requireCaller(request), request.body, { idempotency })
      return answerWritten(reply, written, {
        location: (article) => operationUrl(request, config.publicUrl, 'getArticle', { id: article.id }),
      })
    },

    getArticle: async (request, reply) => {
      const article = await articles.get(requireCaller(request), request.params.id)
      return sendRecord(reply, article, request.query.fields)
    },

    replaceArticle: update,
    updateArticle: update,

    deleteArticle: async (request, reply) => {
      await articles.remove(requireCaller(request), request.params.id, ifMatch(request))
      return reply.code(204).send()
    },

    listArticleComments: async (request, reply) => {
      const { cursor, limit, fields } = request.query
      const page = await articles.listComments(requireCaller(request), request.params.id, { cursor, limit })
      return sendNestedCollection(reply, page, fields)
    },

    createArticleComment: async (request, reply) => {
      const { id } = request.params
      const idempotency = idempotencyClaim(request)
      const written = await articles.addComment(requireCaller(request), id, request.body, { idempotency })
      // Comments have no URL of their own: Location names the article's comments.
      return answerWritten(reply, written, { location: () => operationUrl(request, config.publicUrl, 'listArticleComments', { id }) })
    },
  }
}
