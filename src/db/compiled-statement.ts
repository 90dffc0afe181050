/**
 * A statement whose text never changes, written once: only its parameters are bound per execution,
 * so a hot path builds and compiles no query per request (issue 25: Kysely's building and
 * compiling was the largest share of the server's own work on a read). It still runs through the
 * executor it is given (the request's connection or transaction, its deadline, the statement log
 * that counts and traces statements), like any Kysely query.
 */
import { createQueryId, RawNode } from 'kysely'
import type { Executor } from './executor.ts'

export type CompiledStatement<Row> = (executor: Executor, parameters: readonly unknown[]) => Promise<Row[]>

export function compiledStatement<Row>(text: string): CompiledStatement<Row> {
  const query = RawNode.createWithSql(text)
  return async (executor, parameters) =>
    // A query id of its own per execution, as Kysely gives every query it compiles.
    (await executor.executeQuery<Row>({ sql: text, query, parameters, queryId: createQueryId() })).rows
}
