/** The Vary header, which the caching hook (plugins/http-caching.ts) extends. */
import type { FastifyReply } from 'fastify'

/** Adds a field to Vary, keeping what is there (CORS already varies on Origin). */
export function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary')
  // The usual case (CORS off): nothing to merge with.
  if (current === undefined) {
    reply.header('vary', field)
    return
  }
  const fields = String(current ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
  if (fields.some((part) => part === '*' || part.toLowerCase() === field.toLowerCase())) return
  reply.header('vary', [...fields, field].join(', '))
}
