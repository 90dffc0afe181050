/**
 * Authorization, in one place (decisions §2). Services call these before they read or change
 * anything, so the REST routes and the GraphQL resolvers that share those services cannot disagree.
 */
import { forbidden } from '../errors.ts'
import type { Caller, Scope } from './caller.ts'

/** Only the scopes and the admin flag matter: a webhook endpoint keeps those of its owner (src/modules/events). */
export function hasScope(caller: Pick<Caller, 'admin' | 'scopes'>, scope: Scope): boolean {
  return caller.admin || caller.scopes.has(scope)
}

export function requireScope(caller: Caller, scope: Scope): void {
  if (!hasScope(caller, scope)) throw forbidden(`This operation needs the ${scope} scope.`)
}

export function isOwnerOrAdmin(caller: Caller, ownerId: number): boolean {
  return caller.admin || caller.userId === ownerId
}

/** Another user's order, user record or article: 403 unless the caller is an admin. */
export function requireOwnerOrAdmin(caller: Caller, ownerId: number, what: string): void {
  if (!isOwnerOrAdmin(caller, ownerId)) throw forbidden(`You may not access another user's ${what}.`)
}

export function requireAdmin(caller: Caller): void {
  if (!caller.admin) throw forbidden('This operation needs the admin scope.')
}
