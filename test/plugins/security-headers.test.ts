/**
 * Security headers (decisions §12): helmet's defaults and a Content-Security-Policy that allows
 * only the service's own origin, on every kind of response. /docs and /graphiql must still work under
 * it (every asset they load is their own, nothing inline but what the policy allows by hash or
 * nonce). test/browser/browser.test.ts shows both pages run in Chromium without a CSP violation.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { bearer, build, gql } from '../helper.ts'

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
    sources
      .filter((source) => !["'self'", "'none'", 'data:'].includes(source) && !/^'sha256-/.test(source))
      .map((source) => `${name} ${source}`),
  )
}

t.test('every kind of response carries nosniff and a self-only policy', async (t) => {
  const app = await build(t)
  const responses = {
    'REST record list': await app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(2) }),
    'GraphQL response': await gql(app, '{ me { id } }', bearer(2)),
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
  const pages = new Set(['/docs', '/docs/json'])
  for (const [name, response] of Object.entries(responses)) {
    t.equal(response.headers['x-content-type-options'], 'nosniff', `${name}: nosniff`)
    t.equal(response.headers['x-frame-options'], pages.has(name) ? 'SAMEORIGIN' : undefined, `${name}: helmet's defaults on pages only`)
    t.equal(response.headers['referrer-policy'], pages.has(name) ? 'no-referrer' : undefined, `${name}: helmet's defaults on pages only`)
    const policy = parsePolicy(response.headers['content-security-policy'])
    t.same(policy['default-src'], [pages.has(name) ? "'self'" : "'none'"], `${name}: default-src 'self' on pages, 'none' on the API`)
    t.same(policy['script-src'], pages.has(name) ? ["'self'"] : undefined, `${name}: scripts from the service only`)
    t.same(policy['object-src'], pages.has(name) ? ["'none'"] : undefined, `${name}: no plugins`)
    t.same(selfOnly(policy), [], `${name}: no other origin, no 'unsafe-inline'`)
    t.notOk('upgrade-insecure-requests' in policy, `${name}: plain-HTTP URLs are not rewritten to https`)
  }
  const api = parsePolicy(responses['REST record list'].headers['content-security-policy'])
  t.same(api['style-src'], undefined, "the API allows no inline style at all (default-src 'none')")
})

t.test("API answers carry only nosniff and a policy that allows nothing (decisions §13); the pages keep helmet's set", async (t) => {
  const lean = ['content-security-policy', 'x-content-type-options']
  const helmetOnly = (headers: Record<string, unknown>) =>
    [
      'x-frame-options',
      'referrer-policy',
      'cross-origin-opener-policy',
      'cross-origin-resource-policy',
      'origin-agent-cluster',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-permitted-cross-domain-policies',
      'x-xss-protection',
    ].filter((name) => headers[name] !== undefined)
  for (const publicUrl of [undefined, 'http://api.example.com', 'https://api.example.com']) {
    const app = await build(t, { env: publicUrl ? { PUBLIC_URL: publicUrl } : {} })
    const https = publicUrl?.startsWith('https:') === true
    const answers = {
      'REST read': await app.inject({ method: 'GET', url: '/api/v1/orders/1', headers: bearer(2) }),
      'problem (401)': await app.inject({ method: 'GET', url: '/api/v1/orders' }),
      'problem (404, no route)': await app.inject({ method: 'GET', url: '/nowhere' }),
      GraphQL: await gql(app, '{ me { id } }', bearer(2)),
      '/healthz': await app.inject({ method: 'GET', url: '/healthz' }),
      '/readyz': await app.inject({ method: 'GET', url: '/readyz' }),
      '/metrics': await app.inject({ method: 'GET', url: '/metrics' }),
      '/api/v1/openapi.json': await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: bearer(2) }),
    }
    for (const [name, response] of Object.entries(answers)) {
      t.equal(
        response.headers['content-security-policy'],
        "default-src 'none'; frame-ancestors 'none'",
        `${publicUrl}, ${name}: the API policy`,
      )
      t.equal(response.headers['x-content-type-options'], 'nosniff', `${publicUrl}, ${name}: nosniff`)
      t.same(helmetOnly(response.headers), [], `${publicUrl}, ${name}: none of helmet's document headers`)
      t.equal(
        response.headers['strict-transport-security'],
        https ? 'max-age=31536000; includeSubDomains' : undefined,
        `${publicUrl}, ${name}: HSTS only when PUBLIC_URL is https`,
      )
      t.ok(lean.every((header) => response.headers[header] !== undefined))
    }
    for (const url of ['/docs', '/graphiql']) {
      const page = await app.inject({ method: 'GET', url })
      t.equal(page.statusCode, 200)
      t.ok(helmetOnly(page.headers).length >= 8, `${publicUrl}, ${url}: helmet's full set`)
      t.equal(page.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', `${url}: helmet's HSTS, as before`)
    }
  }
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
      t.same(
        urls.filter((url) => !url.startsWith('data:')),
        [],
        `${asset} refers to nothing but data: URLs`,
      )
      t.notMatch(response.body, /@import/, `${asset} imports nothing`)
    }
    if (asset.endsWith('.js')) scripts.push(response.body)
  }
  // React renders a <style> element from a string literal: each one must be allowed by its hash.
  const inlineStyles = scripts.flatMap((script) =>
    [...script.matchAll(/createElement\("style",null,"([^"]*)"\)/g)].map((match) => match[1]!),
  )
  t.ok(inlineStyles.length > 0, 'Swagger UI renders an inline style (its logo)')
  for (const style of inlineStyles)
    t.ok(policy['style-src']?.includes(sha256(style)), `the inline style ${style.slice(0, 40)}… is allowed by its hash`)
  t.same(selfOnly(policy), [], 'and nothing else beyond the service itself')
  const initializer = scripts.find((script) => script.includes('SwaggerUIBundle('))
  t.ok(initializer, 'the initializer script is served')
  t.notMatch(
    initializer!.replace(/^\s*\/\/.*$/gm, ''),
    /https?:\/\//,
    'the initializer (its comments aside) sends the page to no other origin',
  )
})

t.test('/graphiql loads only its own assets under a self-only policy; its one allowance is a per-response style nonce', async (t) => {
  const app = await build(t)
  const page = await app.inject({ method: 'GET', url: '/graphiql' })
  t.equal(page.statusCode, 200)
  const policy = parsePolicy(page.headers['content-security-policy'])
  const html = page.body
  t.notMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/i, 'no inline <script>')
  t.notMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or event handler attribute')

  const assets = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((match) => match[1]!).filter((asset) => asset !== 'data:,')
  t.equal(assets.length, 6, 'two stylesheets and four scripts (React, ReactDOM, GraphiQL, the page)')
  for (const asset of assets) {
    t.notMatch(asset, /^(?:[a-z]+:)?\/\//i, `${asset} is on the service's own origin`)
    const response = await app.inject({ method: 'GET', url: new URL(asset, 'http://localhost/graphiql').pathname })
    t.equal(response.statusCode, 200, `${asset} is served`)
    t.equal(response.headers['x-content-type-options'], 'nosniff', `${asset}: nosniff`)
    t.match(response.headers['content-type'], asset.endsWith('.css') ? /^text\/css/ : /^text\/javascript/, `${asset}: its content type`)
    t.match(
      response.headers['cache-control'],
      /max-age=31536000, immutable/,
      `${asset}: cached for good (its name carries a version or hash)`,
    )
    if (asset.endsWith('.css')) {
      const urls = [...response.body.matchAll(/url\(\s*["']?([^"')]+)/g)].map((match) => match[1]!)
      t.same(
        urls.filter((url) => !url.startsWith('data:')),
        [],
        `${asset} refers to nothing but data: URLs`,
      )
      t.notMatch(response.body, /@import/, `${asset} imports nothing`)
    }
  }
  t.same(policy['default-src'], ["'self'"])
  t.same(policy['script-src'], ["'self'"], 'scripts from the service only')
  t.same(policy['connect-src'], undefined, "fetch and the WebSocket fall back to default-src 'self'")
  const nonces = (policy['style-src'] ?? []).filter((source) => source.startsWith("'nonce-"))
  t.equal(nonces.length, 1, 'style-src has one nonce')
  t.same(
    policy['style-src']?.filter((source) => !source.startsWith("'nonce-")),
    ["'self'"],
    'and otherwise only the service',
  )
  t.match(html, `data-style-nonce="${nonces[0]!.slice("'nonce-".length, -1)}"`, 'the page hands that nonce to GraphiQL')
  const again = parsePolicy((await app.inject({ method: 'GET', url: '/graphiql' })).headers['content-security-policy'])
  t.not(
    again['style-src']?.find((source) => source.startsWith("'nonce-")),
    nonces[0],
    'a new nonce for every response',
  )
  t.notMatch(JSON.stringify(policy), /unpkg|https?:|unsafe/, 'no other host, nothing unsafe')

  const unknown = await app.inject({ method: 'GET', url: '/graphiql/assets/..%2F..%2Fpackage.json' })
  t.equal(unknown.statusCode, 404, 'only the listed files are served')
})
