/**
 * A typed client generated from openapi.yaml (openapi-typescript types, openapi-fetch) whose
 * transport is the app itself through inject. Every response it receives, errors included, is
 * checked against openapi.yaml; a violation fails the test that received it.
 */
import createClient, { type Client } from 'openapi-fetch'
import type { FastifyInstance } from 'fastify'
import type { paths } from '../src/generated/openapi/paths.ts'
import { contractViolations } from './contract-validator.ts'

interface Assertions {
  fail(message: string): void
  pass(message: string): void
}

export type ContractClient = Client<paths>

export function contractClient(app: FastifyInstance, t: Assertions, headers: Record<string, string> = {}): ContractClient {
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const payload = request.body ? await request.text() : undefined
    const response = await app.inject({
      method: request.method as 'GET',
      url: url.pathname + url.search,
      headers: Object.fromEntries(request.headers.entries()),
      ...(payload !== undefined ? { payload } : {}),
    })
    const violations = contractViolations({
      method: request.method,
      url: url.pathname + url.search,
      statusCode: response.statusCode,
      headers: response.headers,
      body: response.body,
    })
    if (violations.length > 0) t.fail(`contract violation: ${violations.join('; ')}`)
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) responseHeaders.set(name, String(value))
    const empty = response.statusCode === 204 || response.statusCode === 304
    return new Response(empty ? null : response.rawPayload, { status: response.statusCode, headers: responseHeaders })
  }
  return createClient<paths>({ baseUrl: 'http://localhost/api/v1', fetch, headers })
}
