/**
 * Limits applied before execution (decisions §9, §12, §13), all measured on the one operation that
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
 * A refused operation never reaches a resolver, so it runs no SQL. A document Mercurius has not
 * cached yet gets the same verdict before it is validated (preValidation), so that a refused one
 * costs neither its validation nor a place in that cache.
 */
import {
  GraphQLError,
  Kind,
  OverlappingFieldsCanBeMergedRule,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql'
// The field collection graphql-js executes the root selection with (internal in its typings, but
// exported): aliases are separate fields, one response key is one execution, @skip/@include apply.
import { collectFields } from 'graphql/execution/collectFields.js'
import type { MercuriusContext, PreExecutionHookResponse } from 'mercurius'
import type { AppConfig } from '../../config.ts'
import { ApiError } from '../../errors.ts'
import type { CostBucket } from './cost-bucket.ts'
import { operationCost, priceOperation, type OperationPrice } from './cost.ts'
import { locatedApiError } from '../errors.ts'
import {
  executingOperation,
  isIncluded,
  requestedOperationName,
  requestedVariables,
  type ExecutingOperation,
} from './executing-operation.ts'
import type { CostReport } from '../context.ts'
import { createMeasuresCache } from './measures-cache.ts'

/**
 * graphql's validation rules but the one whose time grows with the square of a selection's size:
 * OverlappingFieldsCanBeMergedRule compares the fields of a selection set pairwise. An operation
 * beyond a limit whose only fault is fields that cannot merge is refused for the limit.
 */
const LINEAR_RULES = specifiedRules.filter((rule) => rule !== OverlappingFieldsCanBeMergedRule)

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

function refuseTooDeep(executing: ExecutingOperation, depth: number, maxDepth: number): void {
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
 * The most fields (fragments expanded, lists not multiplied) an operation may select and still be
 * compiled by graphql-jit. Compiling takes about 30 µs a field, in one block of the event loop, and
 * the cost limit admits operations of tens of thousands of fields (a fragment of 3,000 scalars
 * spread under 16 parents costs 4,817 points and took 1.3 s to compile); graphql-js executes those
 * without compiling anything. Real operations select far fewer.
 */
export const JIT_MAX_FIELDS = 1000

/**
 * Why an operation is refused by how it was sent, before its limits are looked at. Mercurius
 * refuses a mutation over GET, but not over the HEAD Fastify serves with the GET handler; the code
 * is Mercurius' own, so errors.ts answers both alike (405, Allow: POST). Over HTTP graphql-js would
 * try to resolve a subscription field as a plain value and fail as an internal error;
 * subscriptions are served over WebSocket only (and Mercurius runs no preExecution for those).
 */
function transportRefusal(operation: OperationDefinitionNode, context: MercuriusContext): Error | undefined {
  const method = context.reply?.request.method
  if (operation.operation !== 'query' && method !== undefined && method !== 'POST') {
    return new ApiError('METHOD_NOT_ALLOWED', `A ${operation.operation} cannot be sent with ${method}.`)
  }
  if (operation.operation === 'subscription') {
    return notExecutable([
      new GraphQLError('Subscriptions are served over WebSocket at /graphql (graphql-transport-ws), not over HTTP.', {
        nodes: [operation],
      }),
    ])
  }
  return undefined
}

interface OperationMeasures extends OperationPrice {
  depth: number
  mutations: number
}

function measure(schema: GraphQLSchema, executing: ExecutingOperation): OperationMeasures {
  return { depth: operationDepth(executing), mutations: mutationCount(schema, executing), ...priceOperation(schema, executing) }
}

function costReport(bucket: CostBucket, cost: number, available: number): CostReport {
  return {
    requestedQueryCost: cost,
    throttleStatus: { maximumAvailable: bucket.capacity, currentlyAvailable: available, restoreRate: bucket.restoreRate },
  }
}

/**
 * Depth, then the mutation count and the cost: an operation beyond them is refused, with the
 * caller's bucket reported but not charged.
 */
async function refuseBeyondLimits(
  executing: ExecutingOperation,
  { depth, mutations, cost }: OperationMeasures,
  limits: GraphqlLimits,
  bucket: CostBucket,
  context: MercuriusContext,
): Promise<void> {
  refuseTooDeep(executing, depth, limits.maxDepth)
  if (mutations <= limits.maxMutations && cost <= limits.maxCost) return
  const current = await bucket.take(context.caller.subject, 0)
  if (current) context.cost = costReport(bucket, cost, current.available)
  if (mutations > limits.maxMutations) {
    throw new ApiError(
      'COST_LIMIT_EXCEEDED',
      `The operation runs ${mutations} mutations; the limit is ${limits.maxMutations} per request.`,
      {
        extensions: { mutations, maxMutations: limits.maxMutations },
      },
    )
  }
  throw new ApiError('COST_LIMIT_EXCEEDED', `The operation costs ${cost} points; the limit is ${limits.maxCost}.`, {
    extensions: { cost, maxCost: limits.maxCost },
  })
}

/**
 * The hooks that enforce the limits on queries and mutations, before anything executes:
 *
 * - preValidation: the verdict before Mercurius validates the document, and caches it. Mercurius
 *   keeps every document that validates in its cache, refused or not; a refused one is kept out of
 *   it. A document within the limits is not validated here; one beyond them of at most
 *   JIT_MAX_FIELDS fields is, by the rules whose time is linear in the document (LINEAR_RULES; the 21,000 tokens of `orders(first: 48)
 *   { a1: id … a7000: id }` take about 150 ms to validate in full), because an invalid document is
 *   answered GRAPHQL_VALIDATION_FAILED whatever it would cost (validation comes first). The operation and its variables are
 *   read from the request (Mercurius' hook is given neither). A document that cannot be measured
 *   (no such operation, variables or a directive that do not coerce), or that its transport
 *   refuses, goes on to validation and to preExecution, which answer it. Mercurius runs no
 *   preValidation for a document it has cached.
 * - preExecution: the operation is found, measured (the measures of an earlier request with the
 *   same document and the same values of the variables they read are taken over), refused or
 *   charged to the caller's bucket; the bucket is per request, the measures are not. Mercurius' graphql-jit cache is
 *   keyed by the document text alone and runs whichever operation it was compiled for, whatever
 *   `operationName` a later request names; so for a document with several operations the hook
 *   hands the document back, which makes Mercurius execute it with graphql-js and the named
 *   operation, the one measured here. It does the same for an operation too large to compile
 *   quickly (JIT_MAX_FIELDS).
 */
export function operationLimitHooks(limits: GraphqlLimits, bucket: CostBucket) {
  // Once per document and values of the variables the measures read (measures-cache.ts): what
  // preValidation measured serves preExecution, and every later request with that document.
  const measured = createMeasuresCache(measure)

  async function preValidation(schema: GraphQLSchema, document: DocumentNode, context: MercuriusContext): Promise<void> {
    let executing: ExecutingOperation
    let measures: OperationMeasures
    try {
      const found = executingOperation(schema, document, requestedOperationName(context), requestedVariables(context))
      if (!('operation' in found) || transportRefusal(found.operation, context)) return
      executing = found
      measures = measured(schema, executing)
    } catch {
      return
    }
    if (measures.depth <= limits.maxDepth && measures.mutations <= limits.maxMutations && measures.cost <= limits.maxCost) return
    // Validation answers first (decisions §8): a document both invalid and beyond a limit is
    // GRAPHQL_VALIDATION_FAILED, as it would be within the limits; Mercurius' own validation then
    // names the error. Only a document beyond them is validated here, by the rules that take time
    // in proportion to it (LINEAR_RULES), and only up to JIT_MAX_FIELDS fields: a larger one
    // (the 69 KB alias document) is refused without the validation it would cost.
    if (measures.fields <= JIT_MAX_FIELDS && validate(schema, document, LINEAR_RULES, { maxErrors: 1 }).length > 0) return
    await refuseBeyondLimits(executing, measures, limits, bucket, context)
  }

  async function preExecution(
    schema: GraphQLSchema,
    document: DocumentNode,
    context: MercuriusContext,
    variables: Record<string, unknown> | null | undefined,
  ): Promise<PreExecutionHookResponse<Error> | undefined> {
    const executing = executingOperation(schema, document, requestedOperationName(context), variables)
    if (!('operation' in executing)) throw notExecutable(executing)
    const refusal = transportRefusal(executing.operation, context)
    if (refusal) throw refusal

    const measures = measured(schema, executing)
    await refuseBeyondLimits(executing, measures, limits, bucket, context)
    const { cost, fields } = measures
    const taken = await bucket.take(context.caller.subject, cost)
    // Unmetered while the bucket's store (Redis) is unavailable: there is no throttle status to report.
    if (taken) context.cost = costReport(bucket, cost, taken.available)
    if (taken && !taken.allowed) {
      context.reply?.header('retry-after', String(taken.retryAfterSeconds))
      throw new ApiError('RATE_LIMITED', `Not enough points left: the operation costs ${cost}, ${taken.available} are available.`, {
        extensions: { retryAfter: taken.retryAfterSeconds },
      })
    }
    return operationCount(document) > 1 || fields > JIT_MAX_FIELDS ? { document } : undefined
  }

  return { preValidation, preExecution }
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
    refuseTooDeep(executing, operationDepth(executing), limits.maxDepth)
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
