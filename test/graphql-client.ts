/**
 * A typed GraphQL client for tests: documents come from operations/*.graphql through codegen, so
 * variables and results are checked by the type checker against schema.graphql.
 */
import type { FastifyInstance } from 'fastify'
import type { TypedDocument } from '../src/graphql/typed-document.ts'
import { gql } from './helper.ts'

export interface GraphqlResponse<Result> {
  status: number
  data: Result | null | undefined
  errors?: Array<{ message: string; path?: Array<string | number>; extensions: { code: string } }>
  extensions?: { cost?: { requestedQueryCost: number } }
}

export function graphqlClient(app: FastifyInstance, headers: Record<string, string>) {
  return {
    async execute<Result, Variables>(
      document: TypedDocument<Result, Variables>,
      variables: Variables,
      options: { byHashOnly?: boolean } = {},
    ): Promise<GraphqlResponse<Result>> {
      const payload = {
        ...(options.byHashOnly ? {} : { query: document.query }),
        operationName: document.operationName,
        variables,
        extensions: { persistedQuery: { version: 1, sha256Hash: document.sha256Hash } },
      }
      const response = await gql(app, payload, headers)
      return { status: response.statusCode, ...response.json() }
    },
  }
}
