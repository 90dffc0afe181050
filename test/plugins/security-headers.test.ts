/**
 * Security headers (decisions §12): helmet's defaults and a Content-Security-Policy that allows
 * only the service's own origin, on every kind of response. /docs must still work under it (every
 * asset it loads is its own, nothing inline but what the policy allows by hash), and /graphiql
 * gets exactly the unpkg.com files Mercurius' page loads until issue #14 serves them locally.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { bearer, build } from '../helper.ts'

type Policy = Record<string, string[]>

function parsePolicy(header: unknown): Policy {
  t.type(header, 'string', 'a Content-Security-Policy header is sent')
  return Object.fromEntries(
    String(header)
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...sources]) => [name!, sources]),
  )
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/** Every source of every directive is the service itself, 'none', data: or a hash. */
function selfOnly(policy: Policy): string[] {
  return Object.entries(policy).flatMap(([name, sources]) =>
    sources.filter((source) => !["'self'", "'none'", 'data:'].includes(source) && !/^'sha256-/.test(source)).map((source) => `${name} ${source}`),
  )
}

t.test('every kind of response carries nosniff and a self-only policy', async (t) => {
  const app = await build(t)
  const responses = {
    'REST record list': await app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(2) }),
    'GraphQL response': await app.inject({ method: 'POST', url: '/graphql', headers: bearer(2), payload: { query: '{ me { id } }' } }),
    'problem (401)': await app.inject({ method: 'GET', url: '/api/v1/orders' }),
    'problem (404)': await app.inject({ method: 'GET', url: '/api/v1/nowhere', headers: bearer(2) }),
    'problem (400)': await app.inject({ method: 'GET', url: '/api/v1/orders/03', headers: bearer(2) }),
    '/healthz': await app.inject({ method: 'GET', url: '/healthz' }),
    '/docs': await app.inject({ method: 'GET', url: '/docs' }),
    '/docs/json': await app.inject({ method: 'GET', url: '/docs/json' }),
  }
  t.equal(responses['REST record list'].statusCode, 200)
  t.equal(responses['GraphQL response'].statusCode, 200)
  t.equal(responses['problem (401)'].statusCode, 401)
  t.equal(responses['problem (404)'].statusCode, 404)
  t.equal(responses['problem (400)'].statusCode, 400)
  t.equal(responses['/healthz'].statusCode, 200)
  t.equal(responses['/docs'].statusCode, 200)
  for (const [name, response] of Object.entries(responses)) {
    t.equal(response.headers['x-content-type-options'], 'nosniff', `${name}: nosniff`)
    t.equal(response.headers['x-frame-options'], 'SAMEORIGIN', `${name}: helmet's defaults`)
    t.equal(response.headers['referrer-policy'], 'no-referrer', `${name}: helmet's defaults`)
    const policy = parsePolicy(response.headers['content-security-policy'])
    t.same(policy['default-src'], ["'self'"], `${name}: default-src 'self'`)
    t.same(policy['script-src'], ["'self'"], `${name}: scripts from the service only`)
    t.same(policy['object-src'], ["'none'"], `${name}: no plugins`)
    t.same(selfOnly(policy), [], `${name}: no other origin, no 'unsafe-inline'`)
    t.notOk('upgrade-insecure-requests' in policy, `${name}: plain-HTTP URLs are not rewritten to https`)
  }
  const api = parsePolicy(responses['REST record list'].headers['content-security-policy'])
  t.same(api['style-src'], ["'self'"], 'the API allows no inline style at all')
})

t.test('/docs loads only its own assets, with nothing inline that the policy blocks', async (t) => {
  const app = await build(t)
  const page = await app.inject({ method: 'GET', url: '/docs' })
  const policy = parsePolicy(page.headers['content-security-policy'])
  const html = page.body
  t.notMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/i, 'no inline <script>')
  t.notMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or event handler attribute')

  const assets = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((match) => match[1]!)
  t.ok(assets.length >= 5, `the page references ${assets.length} assets`)
  const scripts: string[] = []
  for (const asset of assets) {
    t.notMatch(asset, /^(?:[a-z]+:)?\/\//i, `${asset} is on the service's own origin`)
    const response = await app.inject({ method: 'GET', url: new URL(asset, 'http://localhost/docs').pathname })
    t.equal(response.statusCode, 200, `${asset} is served`)
    if (asset.endsWith('.css')) {
      const urls = [...response.body.matchAll(/url\(\s*["']?([^"')]+)/g)].map((match) => match[1]!)
      t.same(urls.filter((url) => !url.startsWith('data:')), [], `${asset} refers to nothing but data: URLs`)
      t.notMatch(response.body, /@import/, `${asset} imports nothing`)
    }
    if (asset.endsWith('.js')) scripts.push(response.body)
  }
  // React renders a <style> element from a string literal: each one must be allowed by its hash.
  const inlineStyles = scripts.flatMap((script) => [...script.matchAll(/createElement\("style",null,"([^"]*)"\)/g)].map((match) => match[1]!))
  t.ok(inlineStyles.length > 0, 'Swagger UI renders an inline style (its logo)')
  for (const style of inlineStyles) t.ok(policy['style-src']?.includes(sha256(style)), `the inline style ${style.slice(0, 40)}… is allowed by its hash`)
  t.same(selfOnly(policy), [], 'and nothing else beyond the service itself')
  const initializer = scripts.find((script) => script.includes('SwaggerUIBundle('))
  t.ok(initializer, 'the initializer script is served')
  t.notMatch(initializer!.replace(/^\s*\/\/.*$/gm, ''), /https?:\/\//, 'the initializer (its comments aside) sends the page to no other origin')
})

t.test('/graphiql allows exactly the unpkg.com files its page loads, and its inline style by hash', async (t) => {
  const app = await build(t)
  const page = await app.inject({ method: 'GET', url: '/graphiql' })
  const main = await app.inject({ method: 'GET', url: '/graphiql/main.js' })
  const worker = await app.inject({ method: 'GET', url: '/graphiql/sw.js' })
  for (const response of [page, main, worker]) t.equal(response.statusCode, 200)
  const pagePolicy = parsePolicy(page.headers['content-security-policy'])
  const workerPolicy = parsePolicy(worker.headers['content-security-policy'])

  const external = (text: string) => [...new Set([...text.matchAll(/https:\/\/[^'"\s]+/g)].map((match) => match[0]))]
  const loaded = external(main.body)
  t.ok(loaded.length >= 4, `main.js loads ${loaded.length} files from another origin`)
  for (const url of loaded) {
    const directive = url.endsWith('.css') ? 'style-src' : 'script-src'
    t.ok(pagePolicy[directive]?.includes(url), `${directive} allows ${url}`)
  }
  // The service worker runs under its own script's policy and pre-fetches with fetch().
  for (const url of external(worker.body)) t.ok(workerPolicy['connect-src']?.includes(url), `the worker may fetch ${url}`)
  const inline = [...page.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1]!)
  t.equal(inline.length, 1, 'the page has one inline style')
  t.ok(pagePolicy['style-src']?.includes(sha256(inline[0]!)), 'allowed by its hash')

  const granted = Object.values(pagePolicy).flat().filter((source) => /^https?:/.test(source))
  t.same(
    granted.filter((source) => !source.startsWith('https://unpkg.com/') || source.endsWith('/')),
    [],
    'only unpkg.com, and only full file URLs, never the whole host',
  )
  t.same(pagePolicy['default-src'], ["'self'"])
  t.notOk(pagePolicy['style-src']?.includes("'unsafe-inline'"), 'no unsafe-inline')
  t.notOk(pagePolicy['script-src']?.includes("'unsafe-inline'") || pagePolicy['script-src']?.includes("'unsafe-eval'"), 'no unsafe script sources')
})
