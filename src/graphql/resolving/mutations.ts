/** What mutations share: idempotency by argument, the written record as payload, offending fields named as arguments. */
import type { MercuriusContext } from 'mercurius'
import { checkIdempotencyKey, type IdempotencyClaim, type Written } from '../../db/write.ts'
import { ApiError } from '../../errors.ts'

/**
 * What a mutation that takes an `idempotencyKey` claims: run once per key, exactly like a REST POST
 * with an Idempotency-Key; none when the key is absent.
 */
export function idempotencyClaimOf(
  context: MercuriusContext,
  field: string,
  args: { idempotencyKey?: string | null | undefined },
): IdempotencyClaim | undefined {
  const { idempotencyKey: key, ...rest } = args
  if (typeof key !== 'string') return undefined
  checkIdempotencyKey(key, { in: 'body', name: 'idempotencyKey' })
  return { caller: context.caller.subject, key, fingerprint: { graphql: field, args: rest } }
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
