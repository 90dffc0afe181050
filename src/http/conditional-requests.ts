/** Conditional writes: a write that names an ETag in If-Match applies only to that version. */
import type { FastifyRequest } from 'fastify'
import { etagOf, requireIfMatch } from './etags.ts'

/** The precondition a service checks against the current record before it writes. */
export function ifMatch(request: FastifyRequest): (current: object) => void {
  return (current) => requireIfMatch(request, etagOf(current))
}
