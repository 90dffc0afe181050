/**
 * The REST contract as served: openapi.yaml (its own bytes but for `servers`, see
 * http/served-contract.ts), or that document as JSON.
 */
import type { ServedContract } from '../../http/served-contract.ts'
import type { OperationHandlers } from '../../http/register-operations.ts'

export function metaHandlers(served: ServedContract): OperationHandlers {
  return {
    getOpenApiJson: async (_request, reply) =>
      reply
        .type('application/json; charset=utf-8')
        .serializer((x: unknown) => x as string)
        .send(served.json),
    getOpenApiYaml: async (_request, reply) =>
      reply
        .type('application/yaml; charset=utf-8')
        .serializer((x: unknown) => x as string)
        .send(served.yaml),
  }
}
