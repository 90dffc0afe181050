/**
 * Reads the bearer token of every request (no session: the token is the whole credential) and
 * exposes `request.caller`. Routes that need a credential call `requireCaller` (auth/caller.ts), which answers 401
 * with the RFC 6750 WWW-Authenticate header. The rate limiter keys on the caller this establishes.
 */
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Caller } from '../auth/caller.ts'
import { createTokenVerifier } from '../auth/tokens.ts'

declare module 'fastify' {
  interface FastifyInstance {
    authenticate(authorization: string | undefined): { caller: Caller | null; error: string | undefined }
    /** Sets `request.caller` (and `credentialError`) from its Authorization header: every request's first step. */
    identifyCaller(request: FastifyRequest): void
  }
}

export default fp<{ jwtSecret: string; jwtMaxLifetimeMs: number }>(
  async function auth(app, options) {
    const verify = createTokenVerifier(options.jwtSecret, options.jwtMaxLifetimeMs)

    function authenticate(authorization: string | undefined): { caller: Caller | null; error: string | undefined } {
      if (authorization === undefined || authorization === '') return { caller: null, error: undefined }
      const match = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/i.exec(authorization.trim())
      if (!match) return { caller: null, error: 'The Authorization header must be "Bearer <token>".' }
      const result = verify(match[1]!)
      return result.ok ? { caller: result.caller, error: undefined } : { caller: null, error: result.reason }
    }

    function identifyCaller(request: FastifyRequest): void {
      const { caller, error } = authenticate(request.headers.authorization)
      request.caller = caller
      request.credentialError = error
    }

    app.decorate('authenticate', authenticate)
    app.decorate('identifyCaller', identifyCaller)
    app.decorateRequest('caller', null)
    app.decorateRequest('credentialError', undefined)
    app.addHook('onRequest', (request, _reply, done) => {
      identifyCaller(request)
      done()
    })
  },
  { name: 'auth' },
)
