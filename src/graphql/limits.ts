/**
 * Limits applied before execution (decisions §9, §12), all measured on the one operation that
 * will execute, with its coerced variables (executing-operation.ts), so they hold alike over POST,
 * GET with `operationName`, automatic persisted queries and the allow-list:
 *
 * - depth: how deep the selections nest on our types; the introspection subtree (`__schema`,
 *   `__type`) is exempt, so the introspection query GraphiQL and code generators send is never
 *   refused;
 * - cost (cost.ts), and the caller's points bucket (cost-bucket.ts);
 * - mutations: how many root fields of a mutation run, aliases and fragments spread at the root
 *   resolved, so one request cannot create thousands of records.
 *
 * A refused operation never reaches a resolver, so it runs no SQL.
 */
import { GraphQLError, Kind, validate, type DocumentNode, type GraphQLSchema, type SelectionSetNode } from 'graphql'
// The field collection graphql-js executes the root selection with (internal in its typings, but
// exported): aliases are separate fields, one response key is one execution, @skip/@include apply.
import { collectFields } from 'graphql/execution/collectFields.js'
import type { MercuriusContext, PreExecutionHookResponse } from 'mercurius'
import type { AppConfig } from '../config.ts'
import { ApiError } from '../errors.ts'
import type { CostBucket } from './cost-bucket.ts'
import { operationCost } from './cost.ts'
import { locatedApiError } from './errors.ts'
import { executingOperation, isIncluded, requestedOperationName, type ExecutingOperation } from './executing-operation.ts'
import type { CostReport } from './context.ts'

type GraphqlLimits = Pick<AppConfig['graphql'], 'maxDepth' | 'maxCost' | 'maxMutations'>

function selectionDepth(
  selectionSet: SelectionSetNode | undefined,
  operation: ExecutingOperation,
  fragmentDepths: Map<string, number>,
): number {
  if (!selectionSet) return 0
  let deepest = 0
  for (const selection of selectionSet.selections) {
    if (!isIncluded(selection, operation.variables)) continue
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue
      deepest = Math.max(deepest, selection.selectionSet ? 1 + selectionDepth(selection.selectionSet, operation, fragmentDepths) : 1)
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      deepest = Math.max(deepest, selectionDepth(selection.selectionSet, operation, fragmentDepths))
    } else {
      const name = selection.name.value
      // Each fragment is measured once per request, however often it is spread (see cost.ts).
      let depth = fragmentDepths.get(name)
      if (depth === undefined) {
        const fragment = operation.fragments[name]
        // A fragment cycle is refused by graphql's validation before this runs.
        fragmentDepths.set(name, 0)
        depth = fragment ? selectionDepth(fragment.selectionSet, operation, fragmentDepths) : 0
        fragmentDepths.set(name, depth)
      }
      deepest = Math.max(deepest, depth)
    }
  }
  return deepest
}

export function operationDepth(operation: ExecutingOperation): number {
  return selectionDepth(operation.operation.selectionSet, operation, new Map())
}

/** How many root fields a mutation runs: one resolver call, and one write, each. */
export function mutationCount(schema: GraphQLSchema, operation: ExecutingOperation): number {
  const root = schema.getMutationType()
  if (operation.operation.operation !== 'mutation' || !root) return 0
  const fields = collectFields(schema, operation.fragments, operation.variables, root, operation.operation.selectionSet)
  return [...fields.values()].filter(([field]) => field !== undefined && !field.name.value.startsWith('__')).length
}

function refuseTooDeep(executing: ExecutingOperation, maxDepth: number): void {
  const depth = operationDepth(executing)
  if (depth > maxDepth) {
    const error = new ApiError('DEPTH_LIMIT_EXCEEDED', `The operation nests ${depth} levels deep; the limit is ${maxDepth}.`, {
      extensions: { depth, maxDepth },
    })
    throw locatedApiError(error, [executing.operation])
  }
}

/** graphql's own errors for a request it would not execute (no such operation, variables that do not coerce). */
export function notExecutable(errors: readonly GraphQLError[]): Error {
  return Object.assign(new Error('The request cannot be executed.'), { errors })
}

function operationCount(document: DocumentNode): number {
  return document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION).length
}

/**
 * The preExecution hook: the operation is found, measured, refused or charged to the caller's
 * bucket. Mercurius' graphql-jit cache is keyed by the document text alone and runs whichever
 * operation it was compiled for, whatever `operationName` a later request names; so for a document
 * with several operations the hook hands the document back, which makes Mercurius execute it with
 * graphql-js and the named operation, the one measured here.
 */
export function enforceOperationLimits(limits: GraphqlLimits, bucket: CostBucket) {
  const report = (cost: number, available: number): CostReport => ({
    requestedQueryCost: cost,
    throttleStatus: { maximumAvailable: bucket.capacity, currentlyAvailable: available, restoreRate: bucket.restoreRate },
  })
  return async function operationLimits(
    schema: GraphQLSchema,
    document: DocumentNode,
    context: MercuriusContext,
    variables: Record<string, unknown> | null | undefined,
  ): Promise<PreExecutionHookResponse<Error> | undefined> {
    const executing = executingOperation(schema, document, requestedOperationName(context), variables)
    if (!('operation' in executing)) throw notExecutable(executing)
    const { operation } = executing

    // Mercurius refuses a mutation over GET, but not over the HEAD Fastify serves with the GET
    // handler. The code is Mercurius' own, so errors.ts answers both alike (405, Allow: POST).
    const method = context.reply?.request.method
    if (operation.operation !== 'query' && method !== undefined && method !== 'POST') {
      throw new ApiError('METHOD_NOT_ALLOWED', `A ${operation.operation} cannot be sent with ${method}.`)
    }
    // (Mercurius runs no preExecution for WebSocket subscriptions.) Over HTTP graphql-js would try to resolve a subscription field as a plain value and fail as
    // an internal error; subscriptions are served over WebSocket only.
    if (operation.operation === 'subscription') {
      throw notExecutable([
        new GraphQLError('Subscriptions are served over WebSocket at /graphql (graphql-transport-ws), not over HTTP.', {
          nodes: [operation],
        }),
      ])
    }

    refuseTooDeep(executing, limits.maxDepth)

    const cost = operationCost(schema, executing)
    const mutations = mutationCount(schema, executing)
    if (mutations > limits.maxMutations || cost > limits.maxCost) {
      const current = await bucket.take(context.caller.subject, 0)
      if (current) context.cost = report(cost, current.available)
      if (mutations > limits.maxMutations) {
        throw new ApiError(
          'COST_LIMIT_EXCEEDED',
          `The operation runs ${mutations} mutations; the limit is ${limits.maxMutations} per request.`,
          { extensions: { mutations, maxMutations: limits.maxMutations } },
        )
      }
      throw new ApiError('COST_LIMIT_EXCEEDED', `The operation costs ${cost} points; the limit is ${limits.maxCost}.`, {
        extensions: { cost, maxCost: limits.maxCost },
      })
    }
    const taken = await bucket.take(context.caller.subject, cost)
    // Unmetered while the bucket's store (Redis) is unavailable: there is no throttle status to report.
    if (taken) context.cost = report(cost, taken.available)
    if (taken && !taken.allowed) {
      context.reply?.header('retry-after', String(taken.retryAfterSeconds))
      throw new ApiError('RATE_LIMITED', `Not enough points left: the operation costs ${cost}, ${taken.available} are available.`, {
        extensions: { retryAfter: taken.retryAfterSeconds },
      })
    }
    return operationCount(document) > 1 ? { document } : undefined
  }
}

/**
 * The preSubscriptionExecution hook. Mercurius 16 neither validates a subscription document nor
 * runs preExecution for it, so without this a subscription could select anything the schema has
 * (or does not have) and be resolved, deeply, for every event. It is validated with graphql's
 * rules, and its depth and cost are measured like a query's, on the operation that executes with
 * the variables the client sent (websocket.ts keeps them). The cost is what each event costs to
 * resolve; it is bounded by `GRAPHQL_MAX_COST` but not charged to the points bucket, since events
 * arrive at the pace of other callers' writes, not this caller's requests.
 */
export function enforceSubscriptionLimits(limits: Pick<GraphqlLimits, 'maxDepth' | 'maxCost'>) {
  return async function subscriptionLimits(
    schema: GraphQLSchema,
    document: DocumentNode,
    context: MercuriusContext,
    id: string | number,
  ): Promise<void> {
    const [invalid] = validate(schema, document)
    if (invalid) throw locatedApiError(new ApiError('GRAPHQL_VALIDATION_FAILED', invalid.message), invalid.nodes)
    const request = context.subscriptionRequest?.(String(id))
    const executing = executingOperation(schema, document, request?.operationName, request?.variables)
    if (!('operation' in executing)) {
      const [error] = executing
      throw locatedApiError(new ApiError('BAD_USER_INPUT', error?.message ?? 'The subscription cannot be executed.'), error?.nodes)
    }
    refuseTooDeep(executing, limits.maxDepth)
    const cost = operationCost(schema, executing)
    if (cost > limits.maxCost) {
      const error = new ApiError(
        'COST_LIMIT_EXCEEDED',
        `Each event of this subscription costs ${cost} points to resolve; the limit is ${limits.maxCost}.`,
        { extensions: { cost, maxCost: limits.maxCost } },
      )
      throw locatedApiError(error, [executing.operation])
    }
  }
}
