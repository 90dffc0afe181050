/** The REST contract as served: exactly the bytes of openapi.yaml, or that document as JSON. */
import type { Contracts } from '../../contracts.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'

export function metaHandlers(contracts: Contracts): OperationHandlers {
  const json = JSON.stringify(contracts.openApiDocument)
  return {
    getOpenApiJson: async (_request, reply) => reply.type('application/json; charset=utf-8').serializer((x: unknown) => x as string).send(json),
    getOpenApiYaml: async (_request, reply) =>
      reply.type('application/yaml; charset=utf-8').serializer((x: unknown) => x as string).send(contracts.openApiYaml),
  }
}
