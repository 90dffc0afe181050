/**
 * GET (and the HEAD Fastify answers with the GET handler) requests whose document names no
 * operation graphql could run. Mercurius 16 reads `getOperationAST(document, operationName)
 * .operation` for a GET before any of our hooks, so a document with several operations and no
 * `operationName`, an unknown name or a repeated `operationName=` is a TypeError there: an
 * INTERNAL_SERVER_ERROR the client caused. This preHandler finds the operation first and answers
 * such a request with graphql's own error, as the same document gets over POST.
 */
import type { FastifyRequest } from 'fastify'
import { getOperationAST, GraphQLError, Kind, parse, type DocumentNode } from 'graphql'
import type { PersistedQueryProvider } from 'mercurius'
import { notExecutable } from '../limits/limits.ts'
import { isObject } from './request-problems.ts'

/** The document text a GET carries, or the persisted one its hash names (undefined when unknown). */
async function documentText(request: FastifyRequest, persisted: PersistedQueryProvider): Promise<string | undefined> {
  const { query, extensions } = isObject(request.query) ? request.query : {}
  if (typeof query === 'string') return query
  if (typeof extensions !== 'string') return undefined
  try {
    const parsedExtensions: unknown = JSON.parse(extensions)
    if (typeof parsedExtensions !== 'object' || parsedExtensions === null) return undefined
    // The request as Mercurius hands it to the provider: a GET without `query` has none.
    const body = { query: '', extensions: parsedExtensions }
    if (!persisted.isPersistedQuery(body)) return undefined
    const hash = persisted.getHash?.(body)
    return hash ? ((await persisted.getQueryFromHash?.(hash)) ?? undefined) : undefined
  } catch {
    // Unparsable extensions, an unknown or refused hash: Mercurius answers those itself.
    return undefined
  }
}

function parsed(text: string): DocumentNode | undefined {
  try {
    return parse(text)
  } catch {
    // A syntax error is Mercurius' to report (GRAPHQL_PARSE_FAILED).
    return undefined
  }
}

/** graphql-js's message when `operationName` selects nothing in `document`. */
function noOperationMessage(document: DocumentNode, operationName: string | undefined): string {
  if (operationName !== undefined) return `Unknown operation named "${operationName}".`
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION)
  return operations.length === 0 ? 'Must provide an operation.' : 'Must provide operation name if query contains multiple operations.'
}

/** The endpoint's preHandler hook for GET and HEAD (a route hook: route-hooks.ts). */
export function refuseGetWithoutOperation(persisted: PersistedQueryProvider) {
  return async function getWithoutOperation(request: FastifyRequest): Promise<void> {
    const { operationName } = isObject(request.query) ? request.query : {}
    if (operationName !== undefined && typeof operationName !== 'string') {
      throw notExecutable([new GraphQLError('operationName must be one string.')])
    }
    const text = await documentText(request, persisted)
    const document = text === undefined ? undefined : parsed(text)
    // As graphql and Mercurius read it: an empty name is a name, which no operation has.
    if (!document || getOperationAST(document, operationName)) return
    throw notExecutable([new GraphQLError(noOperationMessage(document, operationName))])
  }
}
