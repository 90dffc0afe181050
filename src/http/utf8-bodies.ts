/**
 * Request bodies are UTF-8 text: JSON must be (RFC 8259 §8.1), and so is a GraphQL document. A
 * body whose bytes are not UTF-8 is refused, 400 MALFORMED_BODY on REST and BAD_REQUEST on
 * GraphQL, before anything reads it (decisions §13): decoding it anyway would put U+FFFD where the
 * bytes were, and store text the client never sent. Every way the service reads a text body is
 * set up here, so the rule holds for each of them.
 */
import { isUtf8 } from 'node:buffer'
import { pipeline, type Readable, Transform } from 'node:stream'
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify'
import { ApiError } from '../errors.ts'

/** The JSON media types the service reads (merge patch for PATCH, JSON:API's for versioning). */
const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json', 'application/vnd.api+json']

export const notUtf8 = () => new ApiError('MALFORMED_BODY', 'The body is not valid UTF-8 text.')

type Done = (error: Error | null, body?: unknown) => void

/**
 * JSON bodies, REST's and GraphQL's: read as bytes, refused unless they are UTF-8, then parsed by
 * Fastify's own JSON parser (prototype poisoning refused) as before.
 */
export function registerJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'buffer', bodyLimit }, (request: FastifyRequest, body: Buffer, done: Done) => {
    if (!isUtf8(body)) return done(notUtf8())
    parseJson(request, body.toString('utf8'), done)
  })
}

/** The body stream, failing with MALFORMED_BODY as soon as its bytes stop being UTF-8. */
function utf8Only(payload: Readable): Readable {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        decoder.decode(chunk, { stream: true })
        callback(null, chunk)
      } catch {
        callback(notUtf8())
      }
    },
    flush(callback) {
      try {
        decoder.decode()
        callback()
      } catch {
        callback(notUtf8())
      }
    },
  })
  // The reader (Fastify's body reader) hears of either stream's failure through `checked`.
  return pipeline(payload, checked, () => {})
}

/**
 * `application/graphql` bodies (a bare document) are read by a parser Mercurius registers in its
 * own encapsulated context, out of reach of the app's parsers: the POST /graphql route checks the
 * bytes on their way to it instead. Call before Mercurius registers its routes.
 */
export function refuseNonUtf8GraphqlDocuments(app: FastifyInstance, graphqlPath: string): void {
  const check: preParsingHookHandler = (request, _reply, payload, done) => {
    const mediaType = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase()
    done(null, mediaType === 'application/graphql' ? utf8Only(payload) : payload)
  }
  app.addHook('onRoute', (route) => {
    if (route.url === graphqlPath && route.method === 'POST') route.preParsing = [...[route.preParsing ?? []].flat(), check]
  })
}
