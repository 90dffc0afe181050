/**
 * A statement whose text never changes, written once: only its parameters are bound per execution,
 * so a hot path builds and compiles no query per request (Kysely's building and
 * compiling was the largest share of the server's own work on a read). It still runs through the
 * executor it is given (the request's connection or transaction, its deadline, the statement log
 * that counts and traces statements), like any Kysely query.
 */
import { createQueryId, type RawBuilder, RawNode } from 'kysely'
import type { Executor } from './executor.ts'

export type CompiledStatement<Row> = (executor: Executor, parameters: readonly unknown[]) => Promise<Row[]>

export function compiledStatement<Row>(text: string): CompiledStatement<Row> {
  const query = RawNode.createWithSql(text)
  return async (executor, parameters) =>
    // A query id of its own per execution, as Kysely gives every query it compiles.
    (await executor.executeQuery<Row>({ sql: text, query, parameters, queryId: createQueryId() })).rows
}

/** At most this many shapes of one statement are kept compiled; past it, a shape compiles per run. */
const MAX_SHAPES = 256

/**
 * A statement whose text depends only on its query's shape (which filters are present, the sort,
 * the relations read with it), compiled once per shape, its values bound per execution: a list
 * read builds and compiles no query per request either. `parametersOf` lists the values in the
 * order the built statement binds them; the first execution of each shape checks that against
 * Kysely's own compilation, so a parametersOf that drifts from `build` fails loudly, never binds
 * a value to the wrong placeholder.
 */
export function compiledByShape<Query, Row>(
  db: Executor,
  statement: {
    shapeOf(query: Query): string
    build(query: Query): RawBuilder<Row>
    parametersOf(query: Query): unknown[]
  },
): (executor: Executor, query: Query) => Promise<Row[]> {
  const compiled = new Map<string, CompiledStatement<Row>>()
  return async (executor, query) => {
    const shape = statement.shapeOf(query)
    const parameters = statement.parametersOf(query)
    let run = compiled.get(shape)
    if (!run) {
      const built = statement.build(query).compile(db)
      if (!sameValues(built.parameters, parameters))
        throw new Error(`the statement of shape ${shape} binds other values than its parametersOf lists`)
      run = compiledStatement<Row>(built.sql)
      if (compiled.size < MAX_SHAPES) compiled.set(shape, run)
    }
    return run(executor, parameters)
  }
}

/** Values as bound: equal scalars, or arrays (an `= any($1)` list) of equal scalars. */
function sameValues(bound: readonly unknown[], listed: readonly unknown[]): boolean {
  return (
    bound.length === listed.length &&
    bound.every((value, i) => {
      const other = listed[i]
      return Array.isArray(value) && Array.isArray(other) ? sameValues(value, other) : value === other
    })
  )
}
