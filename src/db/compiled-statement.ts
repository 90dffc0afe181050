/**
 * A statement whose text never changes, written once: only its parameters are bound per execution,
 * so a hot path builds and compiles no query per request (Kysely's building and
 * compiling was the largest share of the server's own work on a read). Run in a transaction, it
 * goes through the transaction's executor like any Kysely query; run on the app's database itself,
 * it goes below Kysely's executor when the database offers that (DatabaseHandle.runStatement: one
 * checkout and one driver call, the deadline and the statement log kept; decisions §19).
 */
import { type CompiledQuery, createQueryId, type Kysely, type RawBuilder, RawNode } from 'kysely'
import type { Executor } from './executor.ts'
import type { Database } from './schema.ts'

export type CompiledStatement<Row> = (executor: Executor, parameters: readonly unknown[]) => Promise<Row[]>

/** Runs one compiled statement on the database itself, outside any transaction (DatabaseHandle.runStatement). */
export type RunStatement = <Row>(query: CompiledQuery) => Promise<Row[]>

/**
 * The app's database (`app.db`) and its short path for a fixed statement, when it has one: none on
 * PGlite, and none with replicas, where every statement of `app.db` is routed (read-routing.ts).
 */
export interface StatementTarget {
  db: Kysely<Database>
  run: RunStatement | undefined
}

export function compiledStatement<Row>(text: string, target?: StatementTarget): CompiledStatement<Row> {
  const query = RawNode.createWithSql(text)
  const run = target?.run
  const db = target?.db
  return async (executor, parameters) => {
    // A query id of its own per execution, as Kysely gives every query it compiles.
    const compiled: CompiledQuery = { sql: text, query, parameters, queryId: createQueryId() }
    if (run !== undefined && executor === db) return run<Row>(compiled)
    return (await executor.executeQuery<Row>(compiled)).rows
  }
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
  target: StatementTarget,
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
      const built = statement.build(query).compile(target.db)
      if (!sameValues(built.parameters, parameters))
        throw new Error(`the statement of shape ${shape} binds other values than its parametersOf lists`)
      run = compiledStatement<Row>(built.sql, target)
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
