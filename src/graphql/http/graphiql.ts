/**
 * GraphiQL at /graphiql, served entirely by the service (decisions §12: no other host, a
 * 'self'-only Content-Security-Policy): one HTML page, its script and stylesheet (graphiql/), and
 * the browser builds of React 18 and GraphiQL 4 straight from their npm packages. Outside
 * production only, like Mercurius' own GraphiQL, which this replaces (that one loaded everything
 * from unpkg.com).
 *
 * GraphiQL 4.1 is the newest release with a prebuilt browser bundle (`graphiql.min.js`, React and
 * ReactDOM as globals); GraphiQL 5 ships ES modules with Monaco and its web workers, which need a
 * bundler and a build step this project does not have.
 */
import type { FastifyInstance } from 'fastify'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { findProjectRoot } from '../../contract/contracts.ts'
import { ApiError } from '../../errors.ts'

interface Asset {
  /** Where the file is: a package's own file, or one of graphiql/ in this project. */
  path: string
  contentType: string
}

/** The example query of the README's tour: the spec's traversal. */
export const GRAPHIQL_EXAMPLE_QUERY = `# A user with their last orders and the items of each, in one request.
# Paste a token into the Authorization header below (npm run -s token -- --sub 2 --scope "orders:read orders:write"),
# then run it with the ▶ button or Ctrl-Enter.
{
  user(id: 2) {
    name
    orders(last: 2) {
      id
      databaseId
      status
      total
      items {
        sku
        qty
      }
    }
  }
}
`
export const GRAPHIQL_HEADERS_TEMPLATE = `{
  "Authorization": "Bearer <paste a token from npm run token>"
}`
const TOKEN_HINT =
  'No token yet: replace <paste a token from npm run token> in Headers (below the query) with a token, e.g. from ' +
  'npm run -s token -- --sub 2 --scope "orders:read orders:write articles:write". The schema then loads by itself.'

const JS = 'text/javascript; charset=utf-8'
const CSS = 'text/css; charset=utf-8'
const IMMUTABLE = 'public, max-age=31536000, immutable'

function packageFile(require: NodeJS.Require, name: string, file: string): { path: string; version: string } {
  const manifest = require.resolve(`${name}/package.json`)
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }
  return { path: join(dirname(manifest), file), version }
}

/**
 * The page's assets in the order the page loads them (GraphiQL expects React and ReactDOM as
 * globals), by URL name; each name carries a version or a content hash, so they never go stale.
 */
function assets(): Map<string, Asset> {
  const require = createRequire(import.meta.url)
  const ownDir = join(findProjectRoot(), 'src', 'graphql', 'http', 'graphiql')
  const own = (file: string) => {
    const path = join(ownDir, file)
    return { path, version: createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 12) }
  }
  const react = packageFile(require, 'react', 'umd/react.production.min.js')
  const reactDom = packageFile(require, 'react-dom', 'umd/react-dom.production.min.js')
  const graphiqlJs = packageFile(require, 'graphiql', 'graphiql.min.js')
  const graphiqlCss = packageFile(require, 'graphiql', 'graphiql.min.css')
  const pageJs = own('page.js')
  const pageCss = own('page.css')
  return new Map([
    [`graphiql-${graphiqlCss.version}.min.css`, { path: graphiqlCss.path, contentType: CSS }],
    [`page-${pageCss.version}.css`, { path: pageCss.path, contentType: CSS }],
    [`react-${react.version}.min.js`, { path: react.path, contentType: JS }],
    [`react-dom-${reactDom.version}.min.js`, { path: reactDom.path, contentType: JS }],
    [`graphiql-${graphiqlJs.version}.min.js`, { path: graphiqlJs.path, contentType: JS }],
    [`page-${pageJs.version}.js`, { path: pageJs.path, contentType: JS }],
  ])
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/'/g, '&#39;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function page(names: string[], endpoint: string, styleNonce: string | undefined): string {
  const url = (name: string) => `graphiql/assets/${name}`
  const styles = names.filter((name) => name.endsWith('.css')).map((name) => `  <link rel="stylesheet" href="${url(name)}">`)
  const scripts = names.filter((name) => name.endsWith('.js')).map((name) => `  <script src="${url(name)}"></script>`)
  const data = {
    endpoint,
    query: GRAPHIQL_EXAMPLE_QUERY,
    headers: GRAPHIQL_HEADERS_TEMPLATE,
    'token-hint': TOKEN_HINT,
    ...(styleNonce ? { 'style-nonce': styleNonce } : {}),
  }
  const attributes = Object.entries(data)
    .map(([name, value]) => `data-${name}="${escapeAttribute(value)}"`)
    .join(' ')
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>GraphiQL</title>
  <link rel="icon" href="data:,">
${styles.join('\n')}
</head>
<body>
  <div id="graphiql" ${attributes}>Loading GraphiQL…</div>
${scripts.join('\n')}
</body>
</html>
`
}

/** Registers /graphiql and /graphiql/assets/:name on `app`; `endpoint` is the GraphQL path. */
export async function registerGraphiql(app: FastifyInstance, endpoint: string): Promise<void> {
  const files = assets()
  const names = [...files.keys()]
  // Read on first request and kept for the life of this app (about 1.6 MB, mostly GraphiQL).
  const contents = new Map<string, Buffer>()

  app.get('/graphiql', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(page(names, endpoint.replace(/^\//, ''), reply.styleNonce)),
  )

  // Static files with versioned names: cacheable for a year, and never counted against the
  // caller's request budget (a page load fetches six).
  app.get<{ Params: { name: string } }>('/graphiql/assets/:name', { config: { rateLimit: false } }, async (request, reply) => {
    const asset = files.get(request.params.name)
    if (!asset) throw new ApiError('NOT_FOUND', `No GraphiQL asset is named ${request.params.name}.`)
    let body = contents.get(request.params.name)
    if (!body) {
      // The bundles name source maps that are not served; without the comment, browser dev tools
      // do not ask for them.
      const text = readFileSync(asset.path, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n')
      body = Buffer.from(text)
      contents.set(request.params.name, body)
    }
    return reply.type(asset.contentType).header('cache-control', IMMUTABLE).send(body)
  })
}
