/**
 * Authorization, in one place (decisions §2). Services call these before they read or change
 * anything, so the REST routes and the GraphQL resolvers that share those services cannot disagree.
 * Which scopes an operation needs is not written here nor in the services: the contracts say it
 * (`x-required-scopes`, `@requiresScopes`), and codegen turns them into `serviceOperationScopes`.
 * Ownership is the services' own rule, checked with `requireOwnerOrAdmin`.
 */
import { forbidden } from '../errors.ts'
import { serviceOperationScopes } from '../generated/required-scopes.ts'
import type { Caller, Scope } from './caller.ts'
import type { ServiceOperation } from '../generated/required-scopes.ts'

/** Only the scopes and the admin flag matter: a webhook endpoint keeps those of its owner (src/modules/events). */
function hasScope(caller: Pick<Caller, 'admin' | 'scopes'>, scope: Scope): boolean {
  return caller.admin || caller.scopes.has(scope)
}

/** The first scope the operation requires that the caller lacks, if any. */
function missingScope(caller: Pick<Caller, 'admin' | 'scopes'>, operation: ServiceOperation): Scope | undefined {
  return serviceOperationScopes[operation].find((scope) => !hasScope(caller, scope))
}

/** Whether the caller carries every scope the contracts require for this service operation. */
export function permits(caller: Pick<Caller, 'admin' | 'scopes'>, operation: ServiceOperation): boolean {
  return missingScope(caller, operation) === undefined
}

/** 403 unless the caller carries every scope the contracts require for this service operation. */
export function authorize(caller: Caller, operation: ServiceOperation): void {
  const missing = missingScope(caller, operation)
  if (missing !== undefined) throw forbidden(`This operation needs the ${missing} scope.`)
}

export function isOwnerOrAdmin(caller: Caller, ownerId: number): boolean {
  return caller.admin || caller.userId === ownerId
}

/** Another user's order, user record or article: 403 unless the caller is an admin. */
export function requireOwnerOrAdmin(caller: Caller, ownerId: number, what: string): void {
  if (!isOwnerOrAdmin(caller, ownerId)) throw forbidden(`You may not access another user's ${what}.`)
}
