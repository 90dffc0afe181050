/**
 * Deprecation at run time (decisions §13, "Contract evolution"; docs/contracts.md, "Contract evolution").
 *
 * - REST: an operation of openapi.yaml marked `deprecated: true` answers with `Deprecation: @<epoch>`
 *   (RFC 9745: a structured-field date, from `x-deprecated-at`), `Sunset: <HTTP-date>` (RFC 8594, from
 *   `x-sunset`, when set) and `Link: <replacement URL>; rel="successor-version"` (from `x-deprecated-by`,
 *   the replacing operation's operationId, its path parameters filled from the request's). Everything
 *   is computed once per route when routes are registered (http/register-operations.ts, from
 *   contract/deprecated-operations.ts): other routes
 *   get no hook at all.
 * - GraphQL: the @deprecated fields a document selects are derived once per parsed document (Mercurius
 *   keeps documents in its cache, so a repeated query costs one WeakMap lookup).
 *
 * Every use is counted in /metrics (`http_deprecated_usage_total{operation}`,
 * `graphql_deprecated_usage_total{field}`) and logged at warn once per caller and operation or field
 * per hour, remembering at most MAX_REMEMBERED pairs (the oldest are forgotten first).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { type DocumentNode, type GraphQLSchema, TypeInfo, visit, visitWithTypeInfo } from 'graphql'
import { Counter } from 'prom-client'
import type { DeprecatedOperation } from '../contract/deprecated-operations.ts'

const ONE_HOUR_MS = 60 * 60 * 1000
/** Caller × operation-or-field pairs remembered for the hourly log line. */
const MAX_REMEMBERED = 10_000

/** The @deprecated fields (`Type.field`) a document selects, sorted. */
export function deprecatedFieldsOf(schema: GraphQLSchema, document: DocumentNode): readonly string[] {
  const typeInfo = new TypeInfo(schema)
  const found = new Set<string>()
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field() {
        const field = typeInfo.getFieldDef()
        const parent = typeInfo.getParentType()
        if (field?.deprecationReason != null && parent) found.add(`${parent.name}.${field.name}`)
      },
    }),
  )
  return [...found].sort()
}

export interface DeprecationRecorder {
  /** A deprecated REST operation was called: count it, log it once per caller per hour. */
  operationUsed(request: FastifyRequest, operation: DeprecatedOperation): void
  /** A GraphQL request selects these deprecated fields. */
  fieldsUsed(request: FastifyRequest | undefined, fields: readonly string[]): void
  /** The route-level hook of a deprecated operation: its headers, its count, its log line. */
  operationHook(operation: DeprecatedOperation): (request: FastifyRequest, reply: FastifyReply, done: () => void) => void
}

declare module 'fastify' {
  interface FastifyInstance {
    deprecation: DeprecationRecorder
  }
}

/**
 * Whether a key may be logged now: true the first time, then false until `periodMs` have passed since
 * it was last allowed. Remembers at most `maxRemembered` keys; past that the oldest are forgotten
 * first (such a key is allowed again early). `now` is the clock (tests pass their own).
 */
export function oncePerPeriod(periodMs: number, maxRemembered: number, now: () => number = Date.now): (key: string) => boolean {
  // key → when it may be allowed again; insertion order is age order.
  const allowedFrom = new Map<string, number>()
  return (key) => {
    const at = now()
    const from = allowedFrom.get(key)
    if (from !== undefined && from > at) return false
    allowedFrom.delete(key)
    if (allowedFrom.size >= maxRemembered) allowedFrom.delete(allowedFrom.keys().next().value as string)
    allowedFrom.set(key, at + periodMs)
    return true
  }
}

function callerKey(request: FastifyRequest | undefined): string {
  if (!request) return 'in-process'
  return request.caller ? `sub:${request.caller.subject}` : `ip:${request.ip}`
}

export default fp(
  async function deprecation(app: FastifyInstance) {
    const registers = [app.metricsRegistry]
    const operationUses = new Counter({
      name: 'http_deprecated_usage_total',
      help: 'Calls of a deprecated REST operation (deprecated: true in openapi.yaml), by operationId.',
      labelNames: ['operation'],
      registers,
    })
    const fieldUses = new Counter({
      name: 'graphql_deprecated_usage_total',
      help: 'GraphQL operations executed that select a @deprecated field, by field (Type.field).',
      labelNames: ['field'],
      registers,
    })

    const mayLog = oncePerPeriod(ONE_HOUR_MS, MAX_REMEMBERED)
    const logOncePerHour = (request: FastifyRequest | undefined, target: string, line: Record<string, unknown>, message: string) => {
      const caller = callerKey(request)
      if (mayLog(`${caller}\0${target}`)) (request?.log ?? app.log).warn({ deprecated: line, caller }, message)
    }

    const recorder: DeprecationRecorder = {
      operationUsed(request, operation) {
        operationUses.inc({ operation: operation.operationId })
        logOncePerHour(
          request,
          operation.operationId,
          { operation: operation.operationId, sunset: operation.sunset },
          `deprecated operation ${operation.operationId} called`,
        )
      },
      fieldsUsed(request, fields) {
        for (const field of fields) {
          fieldUses.inc({ field })
          logOncePerHour(request, field, { field }, `deprecated GraphQL field ${field} selected`)
        }
      },
      operationHook(operation) {
        const link = operation.successorUrl
        const hasParameters = link?.includes('{') ?? false
        return (request, reply, done) => {
          reply.header('deprecation', operation.deprecation)
          if (operation.sunset) reply.header('sunset', operation.sunset)
          if (link) {
            const params = new Map(typeof request.params === 'object' && request.params !== null ? Object.entries(request.params) : [])
            const url = hasParameters
              ? link.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(params.get(name) ?? '')))
              : link
            reply.header('link', `<${url}>; rel="successor-version"`)
          }
          recorder.operationUsed(request, operation)
          done()
        }
      },
    }
    app.decorate('deprecation', recorder)
  },
  { name: 'deprecation', dependencies: ['metrics'] },
)
