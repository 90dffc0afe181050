/**
 * What a database driver's error stands for in the error catalogue, once for both styles: REST
 * (http/problems.ts) and GraphQL (graphql/errors.ts) answer an outage (the database unreachable,
 * its connection lost, a statement past its timeout) with DATABASE_UNAVAILABLE and a constraint
 * violation with its own code (db/constraint-violation.ts). Any other error is no driver error
 * this answers for: undefined.
 */
import { type ApiError, databaseUnavailable } from '../errors.ts'
import { constraintViolation } from './constraint-violation.ts'
import { isDatabaseUnavailable } from './database-unavailable.ts'

export function driverError(error: unknown): ApiError | undefined {
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error)
  return constraintViolation(error)
}
