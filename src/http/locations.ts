/**
 * Absolute URLs the service answers with: where a created record lives (`Location`), built from
 * the URL of the operation that reads it, so no path is written twice.
 */
import type { FastifyRequest } from 'fastify'
import { operations, type OperationId } from '../generated/openapi/operations.ts'
import type { OperationRequest } from './register-operations.ts'

/** PUBLIC_URL when configured, else the scheme and host the client used. */
export function baseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`
}

/** The absolute URL of an operation for these path parameters: getOrder with `{ id: 7 }` is `…/api/v1/orders/7`. */
export function operationUrl<K extends OperationId>(
  request: FastifyRequest,
  publicUrl: string | undefined,
  operationId: K,
  params: OperationRequest<K>['Params'],
): string {
  const values: Record<string, unknown> = params
  // Fastify's `:name` placeholders; `::` is a literal colon.
  const path = operations[operationId].url.replace(/::|:(\w+)/g, (_literal, name?: string) =>
    name === undefined ? ':' : encodeURIComponent(String(values[name])),
  )
  return `${baseUrl(request, publicUrl)}${path}`
}
