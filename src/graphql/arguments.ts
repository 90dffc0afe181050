/** Turning GraphQL arguments into domain values, with the same bounds REST has. */
import type { MercuriusContext } from 'mercurius'
import type { Caller } from '../auth/caller.ts'
import { ApiError, badRequest, credentialRequired } from '../errors.ts'
import { parsePageSize } from '../pagination/page-size.ts'
import { validateIdempotencyKey, type IdempotencyClaim } from '../idempotency.ts'
import type { Written } from '../db/transaction.ts'
import { parseRecordId, RECORD_ID_RULE } from '../record-id.ts'

export function callerOf(context: MercuriusContext): Caller {
  return context.caller
}

/** The caller of a subscription: its connection had to present a valid credential. */
export function subscriber(context: MercuriusContext): Caller {
  if (!context.caller) throw credentialRequired(undefined, 'connection_init')
  return context.caller
}

/** An `ID` argument that names a record: canonical, as REST path ids are, or BAD_USER_INPUT. */
export function parseId(value: string | number, argument: string): number {
  const id = parseRecordId(String(value))
  if (id === undefined) {
    throw badRequest('INVALID_ID', `${argument} ${RECORD_ID_RULE}.`, [{ in: 'body', name: argument, message: RECORD_ID_RULE }])
  }
  return id
}

/** `first`/`last`: the page size rule REST's `limit` follows too. */
export const parseCount = parsePageSize

/** null instead of NOT_FOUND, for nullable single-record fields such as Query.order. */
export async function orNull<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null
    throw error
  }
}

/**
 * What a mutation that takes an `idempotencyKey` claims: run once per key, exactly like a REST POST
 * with an Idempotency-Key; none when the key is absent.
 */
export function idempotencyClaimOf<T>(
  context: MercuriusContext,
  field: string,
  args: { idempotencyKey?: string | null | undefined },
): IdempotencyClaim<T> | undefined {
  const { idempotencyKey: key, ...rest } = args
  if (typeof key !== 'string') return undefined
  validateIdempotencyKey(key, 'argument')
  return { caller: context.caller.subject, key, fingerprint: { graphql: field, args: rest }, answer: () => ({ status: 200 }) }
}

/** A mutation's payload: the written record, fresh or replayed alike. */
export async function payloadOf<T>(written: Promise<Written<T>>): Promise<T> {
  return (await written).value
}

const camelCase = (segment: string) => segment.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase())

/**
 * The services name an offending field of a command as REST does, by its JSON pointer in the body
 * (`/items/0/qty`, `/company_id`). A GraphQL client sent it as an argument: this names it the way
 * the client wrote it (decisions §12: `input.items.0.qty`, `input.companyId`, `reason`), under
 * `argument` (the argument holding the command, or '' when its fields are arguments themselves).
 */
export async function namedAsArguments<T>(argument: string, work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (!(error instanceof ApiError) || !error.errors?.some((field) => field.in === 'body' && field.name.startsWith('/'))) throw error
    const errors = error.errors.map((field) => {
      if (field.in !== 'body' || !field.name.startsWith('/')) return field
      const path = field.name
        .slice(1)
        .split('/')
        .filter((segment) => segment !== '')
        .map((segment) => camelCase(segment.replace(/~1/g, '/').replace(/~0/g, '~')))
      return { in: 'argument' as const, name: [argument, ...path].filter((segment) => segment !== '').join('.'), message: field.message }
    })
    throw new ApiError(error.code, error.detail, { errors, headers: error.headers, extensions: error.extensions, cause: error })
  }
}
