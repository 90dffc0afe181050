/**
 * Security headers on every response (decisions §12, §13 "Lean responses"). The HTML pages (/docs
 * and its assets, /graphiql) carry helmet's defaults, with a Content-Security-Policy that allows
 * only the service's own origin. Everything else is an API answer (JSON, problem+json, the
 * metrics text, GraphiQL's static assets) and carries only what matters for an API (OWASP REST
 * Security): nosniff, a policy that allows nothing (a JSON body rendered as a page runs nothing and
 * cannot be framed), and Strict-Transport-Security when PUBLIC_URL is https. The rest of helmet's set
 * (X-Frame-Options, Referrer-Policy, the Cross-Origin-* policies, …) only instructs a browser
 * rendering a document, and cost about 450 bytes on every JSON response. Registered first, so that
 * refusals (401, 404, 429) carry them too. It holds no connection, so nothing here can fail at run
 * time.
 *
 * helmet itself, not @fastify/helmet: that wrapper builds a new helmet middleware (parsing every
 * directive again) for every request, which cost about 5% of the server's CPU time per request in
 * the bench. Here each policy's middleware is built once, at start, and the policies
 * whose headers never change are applied as headers computed once.
 */
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import { randomBytes } from 'node:crypto'
import { IncomingMessage, type OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { Socket } from 'node:net'

type SecurityPolicy = 'api' | 'docs' | 'graphiql'

export interface SecurityHeadersOptions {
  /** PUBLIC_URL: when it is https, API answers carry Strict-Transport-Security too. */
  publicUrl: string | undefined
}

/** Helmet's default Strict-Transport-Security, the one the HTML pages carry. */
const HSTS = 'max-age=31536000; includeSubDomains'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The headers of the API's policy, computed once: what every API answer carries, also those
     * Fastify or Node send outside any hook (http/unrouted-answers.ts).
     */
    readonly apiSecurityHeaders: Readonly<OutgoingHttpHeaders>
  }
  interface FastifyReply {
    /** The nonce this response's policy allows for inline <style> (only on /graphiql routes). */
    readonly styleNonce: string | undefined
  }
  interface FastifyContextConfig {
    /** Which Content-Security-Policy the route's responses carry (set by this plugin's onRoute). */
    securityPolicy?: SecurityPolicy
  }
}

type DirectiveValue = string | ((request: IncomingMessage, response: ServerResponse) => string)
type Directives = Record<string, DirectiveValue[]>

/**
 * Helmet's default policy, narrowed to 'self': no `https:` for fonts and styles and no
 * 'unsafe-inline' styles (Swagger UI at /docs needs none of them). `upgrade-insecure-requests` is
 * left out: the service itself speaks plain HTTP, where that directive sends a browser to an
 * https:// URL nobody answers; behind a TLS proxy every URL is already https.
 */
const SELF_ONLY: Directives = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
}

/**
 * Swagger UI (/docs) runs under SELF_ONLY except for one thing: its standalone preset renders the
 * Swagger logo as an SVG with an inline <style> (before @fastify/swagger-ui swaps in its own logo),
 * allowed here by that style's hash so that the page logs no violation. Checked against the served
 * @fastify/swagger-ui 6.1.3 assets by test/plugins/security-headers.test.ts.
 */
const DOCS: Directives = {
  ...SELF_ONLY,
  'style-src': ["'self'", "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"],
}

/**
 * GraphiQL (/graphiql, served by graphql/http/graphiql.ts from npm packages) runs under SELF_ONLY too,
 * with one addition: the Radix dialogs it opens (settings, shortcuts) insert a <style> element
 * whose text is computed (react-remove-scroll's scrollbar gap), so no hash can allow it. That
 * style carries a per-response nonce (the page hands it to the bundle as `__webpack_nonce__`),
 * allowed by `style-src 'nonce-…'`: no 'unsafe-inline', no other host, nothing for scripts.
 */
function graphiqlDirectives(nonces: WeakMap<object, string>): Directives {
  const styleNonce = (_request: IncomingMessage, response: ServerResponse) => {
    const nonce = randomBytes(16).toString('base64')
    nonces.set(response, nonce)
    return `'nonce-${nonce}'`
  }
  // helmet calls a directive's function for every response it sends.
  return { ...SELF_ONLY, 'style-src': ["'self'", styleNonce] }
}

/** The headers a helmet middleware sets, read from a response that is never sent. */
function headersOf(middleware: ReturnType<typeof helmet>): OutgoingHttpHeaders {
  const request = new IncomingMessage(new Socket())
  const response = new ServerResponse(request)
  middleware(request, response, (error) => {
    if (error !== undefined) throw error
  })
  return response.getHeaders()
}

function policy(directives: Directives): HelmetOptions {
  return { contentSecurityPolicy: { useDefaults: false, directives } }
}

/** The API's whole set (decisions §13), computed once. */
function apiHeaders(publicUrl: string | undefined): OutgoingHttpHeaders {
  return {
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    ...(publicUrl?.startsWith('https:') ? { 'strict-transport-security': HSTS } : {}),
  }
}

export default fp<SecurityHeadersOptions>(
  async function securityHeaders(app, options) {
    const nonces = new WeakMap<object, string>()
    // The API's and the docs' headers never change: they are computed once, here (the docs' by
    // helmet), and each response gets a copy. Only GraphiQL's policy (a nonce per response) runs
    // helmet per response.
    const fixedHeaders = { api: apiHeaders(options.publicUrl), docs: headersOf(helmet(policy(DOCS))) }
    const graphiql = helmet(policy(graphiqlDirectives(nonces)))
    app.decorate('apiSecurityHeaders', fixedHeaders.api)
    app.decorateReply('styleNonce', {
      getter(this: { raw: object }) {
        return nonces.get(this.raw)
      },
    })
    // The /docs and /graphiql routes are registered later by their plugins: they get their policy
    // in their config as they appear.
    app.addHook('onRoute', (route) => {
      const securityPolicy: SecurityPolicy | undefined =
        route.url === '/docs' || route.url.startsWith('/docs/') ? 'docs' : route.url === '/graphiql' ? 'graphiql' : undefined
      if (securityPolicy) route.config = { ...route.config, securityPolicy }
    })
    app.addHook('onRequest', (request, reply, done) => {
      const securityPolicy = request.routeOptions.config.securityPolicy ?? 'api'
      if (securityPolicy !== 'graphiql') {
        reply.headers(fixedHeaders[securityPolicy])
        return done()
      }
      graphiql(request.raw, reply.raw, (error) => done(error === undefined || error instanceof Error ? error : new Error(String(error))))
    })
  },
  { name: 'security-headers' },
)
