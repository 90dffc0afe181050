/**
 * Response serializers compiled on first use. Fastify compiles a fast-json-stringify serializer
 * for every response schema of every route when the app becomes ready; with this contract's ~40
 * operations and their error responses that was, after AJV, the largest part of start-up that was
 * ours. Same compiler, same schemas, same output: only when it runs changes.
 *
 * Full records are serialized with their own schemas: the full reads name the full record, with no
 * `oneOf` of full and sparse for fast-json-stringify to validate each value against (decisions
 * §16). A sparse answer (a /sparse/ read) is sent with JSON.stringify (envelopes.ts, sendSparse).
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>

export function lazySerializerFactory(): SerializerFactory {
  const eager = SerializerSelector()
  return (externalSchemas, serializerOptions) => {
    const compile = eager(externalSchemas, serializerOptions)
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined
      return (data: unknown) => (serialize ??= compile(route) as (data: unknown) => string)(data)
    }
  }
}
