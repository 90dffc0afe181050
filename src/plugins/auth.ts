/**
 * Reads the bearer token of every request (no session: the token is the whole credential) and
 * exposes `request.caller`. Routes that need a credential call `requireCaller` (auth/caller.ts), which answers 401
 * with the RFC 6750 WWW-Authenticate header. The rate limiter keys on the caller this establishes.
 * Every transport authenticates through here, with the one verifier buildApp made (auth/tokens.ts).
 */
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Caller } from '../auth/caller.ts'
import type { TokenVerification, TokenVerifier } from '../auth/tokens.ts'

export interface Authentication {
  caller: Caller | null
  /** Why the sent credential was refused; undefined when none was sent or it was accepted. */
  error: string | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The caller an Authorization value stands for. Synchronous for a token verified before (the
     * common case); a promise, which never rejects, when the token's verification has to wait
     * (an identity provider's token seen for the first time, decisions §18).
     */
    authenticate(authorization: string | undefined): Authentication | Promise<Authentication>
    /** Sets `request.caller` (and `credentialError`) from its Authorization header: every request's first step. */
    identifyCaller(request: FastifyRequest): undefined | Promise<void>
  }
}

const authentication = (result: TokenVerification): Authentication =>
  result.ok ? { caller: result.caller, error: undefined } : { caller: null, error: result.reason }

export default fp<{ verifier: TokenVerifier }>(
  async function auth(app, { verifier }) {
    function authenticate(authorization: string | undefined): Authentication | Promise<Authentication> {
      if (authorization === undefined || authorization === '') return { caller: null, error: undefined }
      const match = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/i.exec(authorization.trim())
      if (!match) return { caller: null, error: 'The Authorization header must be "Bearer <token>".' }
      const result = verifier.verify(match[1]!)
      return result instanceof Promise ? result.then(authentication) : authentication(result)
    }

    function identifyCaller(request: FastifyRequest): undefined | Promise<void> {
      const identified = authenticate(request.headers.authorization)
      const identify = ({ caller, error }: Authentication) => {
        request.caller = caller
        request.credentialError = error
      }
      if (identified instanceof Promise) return identified.then(identify)
      identify(identified)
      return undefined
    }

    app.decorate('authenticate', authenticate)
    app.decorate('identifyCaller', identifyCaller)
    app.decorateRequest('caller', null)
    app.decorateRequest('credentialError', undefined)
    // A callback hook, not an async one: a token verified before costs no promise.
    app.addHook('onRequest', (request, _reply, done) => {
      const waiting = identifyCaller(request)
      if (waiting) waiting.then(() => done(), done)
      else done()
    })
    app.addHook('onReady', async () => verifier.start())
    app.addHook('onClose', async () => verifier.close())
  },
  { name: 'auth' },
)
