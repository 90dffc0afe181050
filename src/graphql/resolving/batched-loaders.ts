/**
 * Loaders as resolvers that batch, without Mercurius' loader cache. Mercurius keys every load by a
 * stable JSON stringification of the whole parent record and the arguments (safe-stable-stringify
 * and single-user-cache): for `Order.user` that is the order with every item, for each order. In
 * the GraphQL bench that keying was about 7% of the server's CPU time.
 *
 * Here the same contract, cheaper: the loads of one field made in one tick are one call of its
 * loader (one statement), as with Mercurius. Within one HTTP request a repeated load (the same parent
 * object, as graphql-jit and graphql-js hand every field of one parent, and the same arguments)
 * shares the first answer. A subscription's context lives as long as the subscription, so there
 * nothing is shared between events: each event loads afresh, and waits out a database outage
 * (event-outage.ts).
 *
 * Beyond Mercurius' loaders: each load carries its field's resolve info (a loader can look ahead at
 * the selection below it), and a loader defined as `{ loader, preloaded }` is not called for a
 * parent that already carries the answer (a plan read it with the parent): no batch, no promise.
 */
import { GraphQLScalarType, type GraphQLResolveInfo } from 'graphql'
import type { IResolverObject, IResolvers, MercuriusContext } from 'mercurius'
import { eventLoadError, retryingOutage } from '../../events/event-outage.ts'

/** One parent's load: Mercurius' `{ obj, params }`, and the field's resolve info. */
export interface LoaderQuery {
  obj: unknown
  params: unknown
  info: GraphQLResolveInfo
}

/**
 * A loader as Mercurius defines one (a function, or `{ loader, opts }`), or with `preloaded`.
 * Declared with methods so that a loader typed for its own parents and arguments (loaders.ts) fits
 * (method parameters are compared bivariantly, as Mercurius' own `any` allows).
 */
export interface LoaderDefinition {
  loader(queries: LoaderQuery[], context: MercuriusContext): unknown
  /** The answer a parent already carries, or undefined. */
  preloaded?(obj: unknown, params: unknown): unknown
}

export type LoaderMap = Record<string, Record<string, LoaderDefinition | LoaderDefinition['loader']>>

type BatchLoader = LoaderDefinition['loader']

interface PendingLoad {
  query: LoaderQuery
  /** On a subscription: the event being resolved (the operation's root value). */
  event: unknown
  resolve(value: unknown): void
  reject(error: unknown): void
}

export interface BatchedLoaderOptions {
  /** How long a subscription event's load waits out a database outage (event-outage.ts). */
  eventOutageWaitMs: number
}

class Batcher {
  #pending: PendingLoad[] = []
  /** Answers already asked for in this request, by parent object and arguments; none for subscriptions. */
  readonly #answers: WeakMap<object, Map<string, Promise<unknown>>> | undefined
  /** Set for a subscription: how long its loads wait out an outage. */
  readonly #eventOutageWaitMs: number | undefined
  readonly #name: string
  readonly #load: BatchLoader
  readonly #context: MercuriusContext

  constructor(name: string, load: BatchLoader, context: MercuriusContext, eventOutageWaitMs: number | undefined) {
    this.#name = name
    this.#load = load
    this.#context = context
    this.#eventOutageWaitMs = eventOutageWaitMs
    this.#answers = eventOutageWaitMs === undefined ? new WeakMap() : undefined
  }

  load(obj: unknown, params: unknown, info: GraphQLResolveInfo): Promise<unknown> {
    const parent = typeof obj === 'object' && obj !== null ? obj : undefined
    const argumentsKey = this.#answers && parent ? JSON.stringify(params) : undefined
    const known = parent && argumentsKey !== undefined ? this.#answers?.get(parent)?.get(argumentsKey) : undefined
    if (known) return known
    const answer = new Promise<unknown>((resolve, reject) => {
      this.#pending.push({ query: { obj, params, info }, event: info.rootValue, resolve, reject })
      // Every load of this tick joins the batch (graphql resolves a list's items synchronously).
      if (this.#pending.length === 1) process.nextTick(() => this.#dispatch())
    })
    if (parent && argumentsKey !== undefined && this.#answers) {
      let byArguments = this.#answers.get(parent)
      if (!byArguments) this.#answers.set(parent, (byArguments = new Map()))
      byArguments.set(argumentsKey, answer)
    }
    return answer
  }

  #dispatch(): void {
    const batch = this.#pending
    this.#pending = []
    const waitMs = this.#eventOutageWaitMs
    const fail = (error: unknown) => {
      for (const load of batch) load.reject(waitMs === undefined ? error : eventLoadError(error, load.event))
    }
    const queries = batch.map((load) => load.query)
    let answered: unknown
    try {
      if (waitMs === undefined) {
        answered = this.#load(queries, this.#context)
      } else {
        const context = this.#context
        answered = retryingOutage(
          async () => this.#load(queries, context),
          waitMs,
          () => context.subscriptionOpen?.() ?? true,
        )
      }
    } catch (error) {
      fail(error)
      return
    }
    Promise.resolve(answered).then((results) => {
      if (!Array.isArray(results) || results.length !== batch.length) {
        fail(
          new Error(
            `The loader of ${this.#name} answered ${Array.isArray(results) ? results.length : 'no'} results for ${batch.length} parents.`,
          ),
        )
        return
      }
      // An Error in the answers is that parent's field error, as graphql makes of a resolved Error.
      for (let index = 0; index < batch.length; index++) batch[index]!.resolve(results[index])
    }, fail)
  }
}

/** The resolvers with each loader added as its field's resolver; a field both define is refused. */
export function withBatchedLoaders(resolvers: IResolvers, loaders: LoaderMap, options: BatchedLoaderOptions): IResolvers {
  const merged: IResolvers = { ...resolvers }
  for (const [type, fields] of Object.entries(batchedLoaders(loaders, options))) {
    const existing = merged[type]
    if (existing instanceof GraphQLScalarType || typeof existing === 'function')
      throw new Error(`${type} has loaders: it must be an object type`)
    const objectType: IResolverObject = {}
    for (const [field, resolver] of Object.entries(existing ?? {})) {
      if (typeof resolver === 'string' || typeof resolver === 'number') throw new Error(`${type} has loaders: it must be an object type`)
      if (Object.hasOwn(fields, field)) throw new Error(`${type}.${field} has both a resolver and a loader`)
      objectType[field] = resolver
    }
    merged[type] = Object.assign(objectType, fields)
  }
  return merged
}

/** The loaders as field resolvers. */
function batchedLoaders(loaders: LoaderMap, options: BatchedLoaderOptions): Record<string, IResolverObject> {
  // One Batcher per loader per execution context (an HTTP request, or a subscription).
  const batchers = new WeakMap<object, Map<string, Batcher>>()
  const resolvers: Record<string, IResolverObject> = {}
  for (const [type, fields] of Object.entries(loaders)) {
    const fieldResolvers: Record<string, (obj: unknown, params: unknown, context: MercuriusContext, info: GraphQLResolveInfo) => unknown> =
      {}
    for (const [field, definition] of Object.entries(fields)) {
      const name = `${type}.${field}`
      const load: BatchLoader = typeof definition === 'function' ? definition : definition.loader
      const preloaded = typeof definition === 'function' ? undefined : definition.preloaded
      fieldResolvers[field] = (obj, params, context, info) => {
        const carried = preloaded?.(obj, params)
        if (carried !== undefined) return carried
        let ofContext = batchers.get(context)
        if (!ofContext) batchers.set(context, (ofContext = new Map()))
        let batcher = ofContext.get(name)
        if (!batcher) {
          const forEvents = info.operation.operation === 'subscription'
          batcher = new Batcher(name, load, context, forEvents ? options.eventOutageWaitMs : undefined)
          ofContext.set(name, batcher)
        }
        return batcher.load(obj, params, info)
      }
    }
    resolvers[type] = fieldResolvers
  }
  return resolvers
}
