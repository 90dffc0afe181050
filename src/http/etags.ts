/**
 * The ETag rules (decisions §6): what tag a representation carries, and whether an If-Match or
 * If-None-Match names it. The answers of the contract router (envelopes, conditional requests,
 * write answers) and the caching plugin (plugins/http-caching.ts) both use them, so they live
 * here, below the plugins (docs/layout.md).
 */
import { hash as digest } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { preconditionFailed } from '../errors.ts'
import * as contractSchemas from '../generated/openapi/schemas.ts'

/** The strong ETag of a body: a hash of its bytes. */
export function etagOfBytes(data: string | Buffer): string {
  // The one-shot digest: no Hash object per response; the same value as before.
  return `"${digest('sha256', data, 'base64url').slice(0, 32)}"`
}

/**
 * The contract's representations, as one short tag: a deploy that changes what a record looks like
 * changes every version ETag, so no client keeps a body of the old shape through a 304.
 */
const REPRESENTATIONS = digest('sha256', JSON.stringify(contractSchemas), 'base64url').slice(0, 8)

/**
 * The ETag of a record's full representation; the same value its GET carries. A record that
 * carries its version (`updated_at`, which every change advances by at least a millisecond:
 * db/updated-at.ts) is tagged by its id and that version, with nothing serialized or hashed;
 * any other (users, products, comments: never changed once created) by a hash of its
 * JSON.
 */
export function etagOf(representation: object): string {
  if ('id' in representation && 'updated_at' in representation) {
    const { id, updated_at } = representation
    if (typeof id === 'number' && typeof updated_at === 'string') return etagOfVersion(id, updated_at)
  }
  return etagOfBytes(JSON.stringify(representation))
}

/**
 * The ETag of a sparse answer (`fields=`, decisions §6 and §16): a hash of its bytes, marked as a
 * part. The mark makes it differ from every tag of a full representation (a hash has no dot, a
 * version tag starts with the 8-character tag of the representations), even where the part's
 * bytes are the full record's (every field named): so an If-Match with it is refused, since the
 * client has not seen the record it would change, and a 304 answers only the same part.
 */
export function etagOfPart(bytes: string): string {
  return `"part.${digest('sha256', bytes, 'base64url').slice(0, 32)}"`
}

/** The ETag of the full representation of the record `id` at version `updatedAt` (see etagOf). */
export function etagOfVersion(id: number, updatedAt: string): string {
  return `"${REPRESENTATIONS}.${id}.${updatedAt}"`
}

/** An entity tag without its weakness indicator: `W/"x"` and `"x"` have the same opaque tag. */
const opaqueTag = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag)

/**
 * Whether an If-Match or If-None-Match list names the current entity tag (RFC 9110 §8.8.3.2). If-Match
 * compares strongly (§13.1.1: a weak `W/"…"` never matches, a write must not apply to a version merely
 * equivalent); If-None-Match compares weakly (§13.1.2: `W/"x"` matches `"x"`, as a cache revalidates).
 */
export function listMatches(header: string, etag: string, comparison: 'strong' | 'weak'): boolean {
  if (header.trim() === '*') return true
  const current = comparison === 'strong' ? etag : opaqueTag(etag)
  return header.split(',').some((candidate) => {
    const tag = candidate.trim()
    return (comparison === 'strong' ? tag : opaqueTag(tag)) === current
  })
}

/** Refuses a write whose If-Match names another version than the current one. */
export function requireIfMatch(request: FastifyRequest, currentEtag: string): void {
  const header = request.headers['if-match']
  if (header === undefined) return
  if (!listMatches(header, currentEtag, 'strong')) {
    throw preconditionFailed(`The resource has changed: its current ETag is ${currentEtag}.`)
  }
}
