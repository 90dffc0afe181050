/**
 * Sparse fieldsets in their own media type (decisions §16): which Accept asks for it, and the
 * refusal of a `fields=` request that does not.
 */
import { ApiError } from '../errors.ts'

/**
 * The media type of sparse answers (decisions §16): a `fields=` request is answered in it, and
 * only when its Accept names it, so that `application/json` always means the full records and a
 * generated client's plain call is typed with them.
 */
export const SPARSE_MEDIA_TYPE = 'application/vnd.contract-api.sparse+json'

/** Whether an Accept header names the sparse media type (with a q above 0); wildcards do not count. */
function acceptsSparse(accept: string | undefined): boolean {
  // Media types are case-insensitive; the cheap test first, on every request with fields=.
  if (accept === undefined || !accept.toLowerCase().includes(SPARSE_MEDIA_TYPE)) return false
  return accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';')
    if (type?.trim().toLowerCase() !== SPARSE_MEDIA_TYPE) return false
    const q = parameters.map((parameter) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(parameter)?.[1]).find((value) => value !== undefined)
    return q === undefined || Number(q) > 0
  })
}

/** Refuses a `fields=` request whose Accept does not name the sparse media type (406, nothing read). */
export function requireSparseAccept(fields: unknown, accept: string | undefined): void {
  if (fields === undefined || acceptsSparse(accept)) return
  throw new ApiError(
    'SPARSE_NOT_ACCEPTABLE',
    `fields= answers part of each record, in ${SPARSE_MEDIA_TYPE}: send Accept: ${SPARSE_MEDIA_TYPE} with it (application/json is always the full record).`,
  )
}
