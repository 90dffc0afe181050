/**
 * Response serializers compiled on first use. Fastify compiles a fast-json-stringify serializer
 * for every response schema of every route when the app becomes ready; with this contract's ~40
 * operations and their error responses that was, after AJV, the largest part of start-up that was
 * ours. Same compiler, same schemas, same output: only when it runs changes.
 *
 * One change to the schemas a serializer is compiled from: where the contract says a record is
 * `oneOf: [X, XSparse]` (the full record, or the part `fields=` named: decisions §16), the
 * serializer is compiled for X alone. Only full records go through it: a sparse answer is sent
 * with JSON.stringify (envelopes.ts, sendSparse). For a `oneOf`, fast-json-stringify validates
 * each value with Ajv against the branches to choose one, which for an order meant checking every
 * date-time and item of every record of every response: the largest single cost of list
 * serialization.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'
import * as contractSchemas from '../generated/openapi/schemas.ts'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>

export function lazySerializerFactory(): SerializerFactory {
  const eager = SerializerSelector()
  const fullVariant = fullVariants()
  return (externalSchemas, serializerOptions) => {
    const compile = eager(externalSchemas, serializerOptions)
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined
      return (data: unknown) => (serialize ??= compile({ ...route, schema: fullVariant(route.schema) }) as (data: unknown) => string)(data)
    }
  }
}

/** The generated component schemas' sparse variants, each with its full record's schema. */
function sparseToFull(): Map<unknown, unknown> {
  const schemas: Record<string, unknown> = contractSchemas
  const pairs = new Map<unknown, unknown>()
  for (const [name, schema] of Object.entries(schemas)) {
    const full = name.endsWith('SparseSchema') ? schemas[name.replace(/SparseSchema$/, 'Schema')] : undefined
    if (full !== undefined) pairs.set(schema, full)
  }
  return pairs
}

/** A schema with every `oneOf: [X, XSparse]` replaced by X; the rest shared, not copied. */
export function fullVariants(): <Schema>(schema: Schema) => Schema {
  const pairs = sparseToFull()
  const done = new Map<object, unknown>()
  const rewrite = (node: unknown): unknown => {
    if (typeof node !== 'object' || node === null) return node
    const known = done.get(node)
    if (known !== undefined) return known
    if (!Array.isArray(node) && 'oneOf' in node && Array.isArray(node.oneOf)) {
      const [full, sparse] = node.oneOf
      if (node.oneOf.length === 2 && full !== undefined && pairs.get(sparse) === full) {
        const replaced = rewrite(full)
        done.set(node, replaced)
        return replaced
      }
    }
    const entries = Array.isArray(node) ? node.map(rewrite) : Object.entries(node).map(([key, value]) => [key, rewrite(value)] as const)
    const changed = Array.isArray(node)
      ? (entries as unknown[]).some((value, index) => value !== node[index])
      : (entries as Array<readonly [string, unknown]>).some(([key, value]) => value !== (node as Record<string, unknown>)[key])
    const result = changed ? (Array.isArray(node) ? entries : Object.fromEntries(entries as Array<readonly [string, unknown]>)) : node
    done.set(node, result)
    return result
  }
  // The same JSON shape comes back: only oneOf nodes that named a record's sparse variant changed.
  return <Schema>(schema: Schema) => rewrite(schema) as Schema
}
