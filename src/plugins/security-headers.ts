/**
 * Security headers on every response (decisions §12): helmet's defaults, with a
 * Content-Security-Policy that allows only the service's own origin. Registered first, so that
 * refusals (401, 404, 429) carry them too. It holds no connection, so nothing here can fail at run
 * time.
 */
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'

type Directives = Record<string, string[]>

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
 * Mercurius' GraphiQL page (/graphiql and its scripts) loads React and GraphiQL from unpkg.com, so
 * it cannot work under SELF_ONLY. Until issue #14 serves those assets from the service itself, its
 * routes allow exactly the files it loads, by full URL, and nothing else from that host; the
 * page's one inline <style> is allowed by its hash. These match mercurius 16.10.1's
 * static/main.js, sw.js and graphiql.html (test/plugins/security-headers.test.ts checks that).
 */
const GRAPHIQL_SCRIPTS = [
  'https://unpkg.com/react@18.3.1/umd/react.production.min.js',
  'https://unpkg.com/react-dom@18.3.1/umd/react-dom.production.min.js',
  'https://unpkg.com/graphiql@3.8.3/graphiql.min.js',
]
const GRAPHIQL_STYLESHEET = 'https://unpkg.com/graphiql@3.8.3/graphiql.min.css'
/** What GraphiQL's service worker (/graphiql/sw.js) pre-fetches into its cache. */
const GRAPHIQL_PREFETCHED = ['https://unpkg.com/graphiql@3.8.3/graphiql.css', ...GRAPHIQL_SCRIPTS]
const GRAPHIQL_INLINE_STYLE = "'sha256-hkWEFILcv3lNVVm4JwXqfxOiao3NA2GmXVQ1BoHCS9E='"

const GRAPHIQL: Directives = {
  ...SELF_ONLY,
  'script-src': ["'self'", ...GRAPHIQL_SCRIPTS],
  'style-src': ["'self'", GRAPHIQL_INLINE_STYLE, GRAPHIQL_STYLESHEET],
  'connect-src': ["'self'", ...GRAPHIQL_PREFETCHED],
}

function policy(directives: Directives) {
  return { contentSecurityPolicy: { useDefaults: false, directives } }
}

export default fp(
  async function securityHeaders(app) {
    // The /docs and /graphiql routes are registered later by their plugins: they get their policy
    // as they appear, in the per-route option that helmet's own onRoute hook (added after this
    // one) picks up.
    app.addHook('onRoute', (route) => {
      if (route.url === '/docs' || route.url.startsWith('/docs/')) route.helmet = policy(DOCS)
      if (route.url === '/graphiql' || route.url.startsWith('/graphiql/')) route.helmet = policy(GRAPHIQL)
    })
    await app.register(helmet, policy(SELF_ONLY))
  },
  { name: 'security-headers' },
)
