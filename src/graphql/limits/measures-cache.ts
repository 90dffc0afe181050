/**
 * The limits' measures of an operation (depth, mutation count, cost: limits.ts), computed once per
 * document and per values of the variables they depend on, not once per request.
 *
 * What a measure depends on is recorded, not guessed: the walk reads the coerced variables through
 * a proxy that notes every name it looks at (`first: $n` of a list, `@skip(if: $s)`; `user(id:
 * $id)` is not looked at, so a client paging through ids with one document is measured once). The
 * measures are a function of the operation and of the values read, so a request whose values agree
 * on every name read so far gets the same measures. The names read by an operation only grow (a
 * `@skip` can hide a `first:` from one walk and not from the next); an entry is keyed by the names
 * as well as their values, so an entry stored under fewer names is never taken for one that needs
 * more.
 *
 * Bounded twice: entries hang off the operation's node in the parsed document (a WeakMap), so they
 * live as long as Mercurius keeps that document in its own bounded cache of parsed documents (one
 * per document text) and no longer; and each operation keeps at most MAX_SHAPES_PER_OPERATION
 * sets of values, the least recently used going first.
 */
import type { GraphQLSchema, OperationDefinitionNode } from 'graphql'
import type { ExecutingOperation } from './executing-operation.ts'

/** How many sets of variable values one operation's measures are kept for. */
export const MAX_SHAPES_PER_OPERATION = 64

/** A key longer than this (a variable the cost reads holds a long list) is not worth keeping. */
const MAX_KEY_LENGTH = 2048

interface OperationShapes<Measures> {
  /** Every variable name a walk of this operation has read; `all` once one listed every name. */
  reads: Set<string>
  all: boolean
  /** Measures by the values of `reads` (least recently used first). */
  byValues: Map<string, Measures>
}

/**
 * The variables as a measure sees them, noting every name it reads. graphql-js reads them with
 * `hasOwnProperty` and `[name]`; listing the names (ownKeys) makes every name count.
 */
function recordingReads(variables: Readonly<Record<string, unknown>>, shapes: OperationShapes<unknown>): Record<string, unknown> {
  const note = (key: string | symbol) => {
    if (typeof key === 'string') shapes.reads.add(key)
  }
  return new Proxy(variables, {
    get(target, key, receiver) {
      note(key)
      return Reflect.get(target, key, receiver)
    },
    has(target, key) {
      note(key)
      return Reflect.has(target, key)
    },
    getOwnPropertyDescriptor(target, key) {
      note(key)
      return Reflect.getOwnPropertyDescriptor(target, key)
    },
    ownKeys(target) {
      shapes.all = true
      return Reflect.ownKeys(target)
    },
  })
}

/** The key of `variables` for the names read so far, or undefined when it cannot or should not be kept. */
function valuesKey(shapes: OperationShapes<unknown>, variables: Readonly<Record<string, unknown>>): string | undefined {
  const names = shapes.all ? Object.keys(variables) : [...shapes.reads]
  names.sort()
  let key: string
  try {
    // A name read but absent (a variable left out, without a default) is keyed apart from any value.
    key = JSON.stringify([shapes.all, names.map((name) => (Object.hasOwn(variables, name) ? [name, variables[name]] : [name]))])
  } catch {
    // A value JSON cannot write (a BigInt from a custom scalar): measured per request.
    return undefined
  }
  return key.length > MAX_KEY_LENGTH ? undefined : key
}

/**
 * A cache of `measure` (one per app: limits.ts makes it). `measure` must read the variables only
 * through the operation it is given, and must depend on nothing but the schema, the operation and
 * those variables.
 */
export function createMeasuresCache<Measures>(measure: (schema: GraphQLSchema, operation: ExecutingOperation) => Measures) {
  const byOperation = new WeakMap<OperationDefinitionNode, OperationShapes<Measures>>()
  return function measured(schema: GraphQLSchema, operation: ExecutingOperation): Measures {
    let shapes = byOperation.get(operation.operation)
    if (!shapes) byOperation.set(operation.operation, (shapes = { reads: new Set(), all: false, byValues: new Map() }))
    const known = valuesKey(shapes, operation.variables)
    const hit = known === undefined ? undefined : shapes.byValues.get(known)
    if (hit !== undefined && known !== undefined) {
      // Most recently used last.
      shapes.byValues.delete(known)
      shapes.byValues.set(known, hit)
      return hit
    }
    const measures = measure(schema, { ...operation, variables: recordingReads(operation.variables, shapes) })
    // Keyed by every name read now, this walk's included.
    const key = valuesKey(shapes, operation.variables)
    if (key !== undefined) {
      if (shapes.byValues.size >= MAX_SHAPES_PER_OPERATION) {
        const oldest = shapes.byValues.keys().next()
        if (oldest.done !== true) shapes.byValues.delete(oldest.value)
      }
      shapes.byValues.set(key, measures)
    }
    return measures
  }
}
