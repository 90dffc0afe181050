/**
 * The service as a browser user meets it, in a real Chromium driven by playwright-core:
 * Swagger UI's "Try it out" at /docs (a list read after a POST shows it), GraphiQL at /graphiql, and
 * a browser app on another origin calling the API through CORS (with its own X-Request-Id and
 * traceparent, reading X-Request-Id and Server-Timing) and opening the GraphQL WebSocket, which a
 * page on an origin CORS_ORIGINS does not list cannot. The service listens on a random port over real HTTP; any console
 * error, page error or request to a host other than the service (and the test's own second
 * origin) fails the test. One browser for the file, with a fresh profile.
 *
 * Chromium is the Debian package (/usr/bin/chromium, or CHROMIUM_PATH). Without it the file is
 * skipped with the reason, except in CI (which installs it: .ci/run), where that is a failure.
 */
import t, { type Test } from 'tap'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { build, tokenFor } from '../helper.ts'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]
/** Generous for a 2-core machine under load; a wait that runs out is a failure, never a pass. */
const WAIT_MS = 60_000

if (!existsSync(CHROMIUM)) {
  const reason = `no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`
  if (process.env.CI) throw new Error(`${reason}; CI must provide it`)
  t.plan(0, reason)
} else {
  await run()
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  )
}

/**
 * The cross-origin browser app: a page on its own origin whose script POSTs an order to the API,
 * reads the orders sending its own X-Request-Id and traceparent (so a preflight asks for them), and
 * opens a WebSocket to /graphql. The same page is served on an allowed and on a disallowed origin.
 */
function crossOriginApp(): Server {
  const script = `
    const params = new URLSearchParams(location.search)
    const api = params.get('api')
    const authorization = 'Bearer ' + params.get('token')
    const show = (id, value) => { document.getElementById(id).textContent = typeof value === 'string' ? value : JSON.stringify(value) }
    if (params.get('write') === 'yes') {
      fetch(api + '/api/v1/orders', {
        method: 'POST',
        headers: { Authorization: authorization, 'Content-Type': 'application/json', 'Idempotency-Key': 'cross-origin-1' },
        body: JSON.stringify({ items: [{ sku: 'KB-101', qty: 1 }] }),
      }).then(async (response) => {
        const body = await response.json()
        show('result', {
          status: response.status, etag: response.headers.get('ETag'), location: response.headers.get('Location'),
          remaining: response.headers.get('RateLimit'), id: body.id,
        })
      }, (error) => show('result', 'failed: ' + error.message))
      fetch(api + '/api/v1/orders?limit=1', {
        headers: {
          Authorization: authorization, 'X-Request-Id': 'browser-app-7',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'app=1',
        },
      }).then((response) => show('traced', {
        status: response.status, requestId: response.headers.get('X-Request-Id'), serverTiming: response.headers.get('Server-Timing'),
      }), (error) => show('traced', 'failed: ' + error.message))
    }
    const socket = new WebSocket(api.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws')
    socket.onopen = () => { show('socket', 'open'); socket.close() }
    socket.onerror = () => show('socket', 'error')`
  return createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (path === '/app.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(script)
    if (path === '/') {
      return response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<!doctype html><title>app</title><link rel="icon" href="data:,"><pre id="result"></pre><pre id="traced"></pre><pre id="socket"></pre><script src="/app.js"></script>',
        )
    }
    response.writeHead(404).end()
  })
}

/** Waits until the element `selector` has text, and returns it. */
async function textOf(page: Page, selector: string): Promise<string> {
  await page.waitForFunction(
    (target: string) =>
      (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document.querySelector(
        target,
      )?.textContent,
    selector,
    { timeout: WAIT_MS },
  )
  return page.locator(selector).innerText()
}

async function run(): Promise<void> {
  const appServer = crossOriginApp()
  const appOrigin = await listen(appServer)
  t.teardown(() => new Promise((resolve) => appServer.close(resolve)))
  // The same app on an origin CORS_ORIGINS does not list.
  const otherServer = crossOriginApp()
  const otherOrigin = await listen(otherServer)
  t.teardown(() => new Promise((resolve) => otherServer.close(resolve)))

  const api = await build(t, { env: { CORS_ORIGINS: appOrigin } })
  await api.listen({ port: 0, host: '127.0.0.1' })
  const service = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`

  const profile = await mkdtemp(join(tmpdir(), 'chromium-profile-'))
  t.teardown(() => rm(profile, { recursive: true, force: true }))
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  t.teardown(() => context.close())

  const token = tokenFor(2, 'orders:read orders:write articles:write')
  const allowedHosts = new Set([new URL(service).host, new URL(appOrigin).host, new URL(otherOrigin).host])

  t.test('Swagger UI at /docs: authorize, then "Try it out" on GET and POST /orders', async (t) => {
    const page = await watchedPage(t, context, allowedHosts)
    await page.goto(`${service}/docs`)
    await page.locator('.btn.authorize').first().click({ timeout: WAIT_MS })
    const dialog = page.locator('.modal-ux')
    await dialog.locator('input').first().fill(token)
    await dialog.locator('button.authorize').click()
    await dialog.locator('button.btn-done, button.close-modal').first().click()

    const list = page.locator('#operations-orders-listOrders')
    await list.locator('.opblock-summary').first().click()
    await list.locator('button.try-out__btn').click()
    await list.locator('button.execute').click()
    const listStatus = list.locator('.live-responses-table .response .response-col_status').first()
    await listStatus.waitFor({ timeout: WAIT_MS })
    t.equal((await listStatus.innerText()).trim(), '200', 'GET /orders answers 200 on the page')
    t.match(await list.locator('.live-responses-table').first().innerText(), /"data": \[/, 'and shows the page of orders')

    const create = page.locator('#operations-orders-createOrder')
    await create.locator('.opblock-summary').first().click()
    await create.locator('button.try-out__btn').click()
    await create.locator('input[placeholder="Idempotency-Key"]').fill(`browser-${Date.now()}`)
    await create.locator('button.execute').click()
    const createStatus = create.locator('.live-responses-table .response .response-col_status').first()
    await createStatus.waitFor({ timeout: WAIT_MS })
    t.equal((await createStatus.innerText()).trim(), '201', 'POST /orders with the prefilled example answers 201 on the page')
    const created = /location: http:\/\/127\.0\.0\.1:\d+\/api\/v1\/orders\/(\d+)/i.exec(
      await create.locator('.live-responses-table').first().innerText(),
    )
    t.ok(created, 'with its Location')

    // The list again, within its max-age: "Try it out" revalidates (If-None-Match) instead of
    // showing the browser's cached copy, so the new order is on it.
    const listAgain = page.waitForRequest((request) => request.method() === 'GET' && /\/api\/v1\/orders(\?|$)/.test(request.url()))
    await list.locator('button.execute').click()
    const revalidation = await listAgain
    t.ok((await revalidation.allHeaders())['if-none-match'], 'the list is asked for again with the ETag of the copy the browser holds')
    await t.resolves(
      list.getByText(`"id": ${created?.[1]},`).first().waitFor({ timeout: WAIT_MS }),
      `the list shown after the POST has order ${created?.[1]}`,
    )
    await page.close()
  })

  t.test("/docs shows each operation's examples: a request body and a response", async (t) => {
    const page = await watchedPage(t, context, allowedHosts)
    await page.goto(`${service}/docs`)
    const getUser = page.locator('#operations-users-getUser')
    await getUser.locator('.opblock-summary').first().click({ timeout: WAIT_MS })
    const responses = getUser.locator('.responses-table').first()
    await responses.waitFor({ timeout: WAIT_MS })
    t.match(await responses.innerText(), /"name": "Grace Hopper"/, "getUser's 200 example")
    const createProduct = page.locator('#operations-products-createProduct')
    await createProduct.locator('.opblock-summary').first().click()
    const body = createProduct.locator('.opblock-section-request-body').first()
    await body.waitFor({ timeout: WAIT_MS })
    t.match(await body.innerText(), /"sku": "DK-707"/, "createProduct's request example")
    await page.close()
  })

  t.test('GraphiQL at /graphiql: the header template filled in loads the schema and runs the example query', async (t) => {
    const page = await watchedPage(t, context, allowedHosts)
    await page.goto(`${service}/graphiql`)
    const headers = page.locator('.graphiql-editor-tool .graphiql-editor').last()
    await headers.locator('.CodeMirror').waitFor({ timeout: WAIT_MS })
    const template = await headers
      .locator('.CodeMirror')
      .evaluate((element) => (element as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue())
    t.match(template, /"Authorization": "Bearer <paste a token from npm run token>"/, 'the headers editor holds the template')
    // Paste the token over the placeholder, as a user would.
    await headers.locator('.CodeMirror').evaluate((element, value) => {
      const editor = (element as unknown as { CodeMirror: { getValue(): string; setValue(value: string): void } }).CodeMirror
      editor.setValue(editor.getValue().replace('<paste a token from npm run token>', value))
    }, token)
    // The schema loads by itself once a token is there: the documentation explorer shows the types.
    await page.locator('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]').click()
    await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().waitFor({ timeout: WAIT_MS })
    await page.locator('.graphiql-execute-button').click()
    const result = page.locator('.graphiql-response .CodeMirror')
    await result.getByText('Grace Hopper').first().waitFor({ timeout: WAIT_MS })
    const text = await result.evaluate((element) => (element as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue())
    const body = JSON.parse(text) as { data?: { user?: { name: string; orders: unknown[] } }; errors?: unknown }
    t.notOk(body.errors, 'no errors')
    t.equal(body.data?.user?.name, 'Grace Hopper', 'the result pane shows the data')
    t.ok(Array.isArray(body.data?.user?.orders), 'with her orders')

    // A subscription runs over the WebSocket (graphql-ws), authorized by the same headers.
    await page
      .locator('.graphiql-query-editor .CodeMirror')
      .evaluate((element) =>
        (element as unknown as { CodeMirror: { setValue(value: string): void } }).CodeMirror.setValue(
          'subscription Payments { orderStatusChanged { id status } }',
        ),
      )
    // GraphiQL parses the editor's text after a change; run once it knows the operation is a subscription.
    await page.waitForFunction(
      (selector: string) => {
        const element = (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(selector) as {
          CodeMirror?: { documentAST?: { definitions: Array<{ operation?: string }> } | null }
        } | null
        return element?.CodeMirror?.documentAST?.definitions[0]?.operation === 'subscription'
      },
      '.graphiql-query-editor .CodeMirror',
      { timeout: WAIT_MS },
    )
    const sockets: string[] = []
    page.on('websocket', (socket) => sockets.push(socket.url()))
    await page.locator('.graphiql-execute-button').click()
    await t.resolves(async () => {
      // A payment made before the subscriber is registered goes unseen: pay another order until the pane shows one.
      for (let attempt = 0; attempt < 300; attempt++) {
        if ((await result.getByText('"paid"').count()) > 0) return
        if (attempt % 10 === 0) await payNewOrder(service, token)
        await page.waitForTimeout(100)
      }
      const shown = await result.evaluate((element) => (element as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue())
      throw new Error(`the subscription showed no event; the result pane shows: ${shown}`)
    }, 'the result pane shows the event of a payment made meanwhile')
    t.same(sockets, [`${service.replace(/^http/, 'ws')}/graphql`], 'over a WebSocket to the service itself')

    // GraphiQL's dialogs insert a <style>: the page's policy allows it by its nonce, without any console error.
    await page.locator('.graphiql-sidebar button[aria-label="Open settings dialog"]').click()
    await page.locator('.graphiql-dialog').first().waitFor({ timeout: WAIT_MS })
    t.ok((await page.locator('style[nonce]').count()) > 0, 'the dialog inserted its <style>, with the nonce')
    await page.keyboard.press('Escape')
    await page.close()
  })

  t.test(
    'a browser app on another origin POSTs an order through CORS, reads ETag, Location, X-Request-Id and Server-Timing, and opens a WebSocket',
    async (t) => {
      const page = await watchedPage(t, context, allowedHosts)
      await page.goto(`${appOrigin}/?write=yes&api=${encodeURIComponent(service)}&token=${encodeURIComponent(token)}`)
      const text = await textOf(page, '#result')
      t.notMatch(text, /^failed/, `the fetch succeeded: ${text}`)
      const read = JSON.parse(text) as {
        status: number
        etag: string | null
        location: string | null
        remaining: string | null
        id: number
      }
      t.equal(read.status, 201)
      t.match(read.etag, /^(W\/)?"[^"]+"$/, 'the script reads ETag')
      t.equal(read.location, `${service}/api/v1/orders/${read.id}`, 'and Location')
      t.match(read.remaining, /^"default";r=\d+;t=\d+$/, 'and the rate-limit headers')

      const traced = await textOf(page, '#traced')
      t.notMatch(traced, /^failed/, `a request with X-Request-Id, traceparent and tracestate passes its preflight: ${traced}`)
      const answer = JSON.parse(traced) as { status: number; requestId: string | null; serverTiming: string | null }
      t.equal(answer.status, 200)
      t.equal(answer.requestId, 'browser-app-7', 'the script reads the X-Request-Id it sent, answered back')
      t.match(answer.serverTiming, /db;dur=[\d.]+/, 'and Server-Timing')

      t.equal(await textOf(page, '#socket'), 'open', 'its WebSocket to /graphql opens')
      await page.close()
    },
  )

  t.test('a page on an origin CORS_ORIGINS does not list cannot open a WebSocket to /graphql', async (t) => {
    const page = await watchedPage(t, context, allowedHosts, [/WebSocket connection to .* failed.*403/])
    await page.goto(`${otherOrigin}/?api=${encodeURIComponent(service)}&token=${encodeURIComponent(token)}`)
    t.equal(await textOf(page, '#socket'), 'error', 'the WebSocket fails (the upgrade is answered 403)')
    await page.close()
  })
}

/** Creates an order for the token's user and pays it over REST: one orderStatusChanged event. */
async function payNewOrder(service: string, token: string): Promise<void> {
  const authorization = `Bearer ${token}`
  const created = await fetch(`${service}/api/v1/orders`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ sku: 'MS-202', qty: 1 }] }),
  })
  if (created.status !== 201) throw new Error(`creating an order answered ${created.status}: ${await created.text()}`)
  const { id } = (await created.json()) as { id: number }
  const paid = await fetch(`${service}/api/v1/orders/${id}/payment`, { method: 'POST', headers: { authorization } })
  if (paid.status !== 200) throw new Error(`paying order ${id} answered ${paid.status}: ${await paid.text()}`)
}

/**
 * A new tab that records console errors, page errors and requests to any other host, and fails the
 * test on them; `expectedErrors` are console errors the test provokes, each of which must appear.
 */
async function watchedPage(t: Test, context: BrowserContext, allowedHosts: Set<string>, expectedErrors: RegExp[] = []): Promise<Page> {
  const page = await context.newPage()
  const problems: string[] = []
  const seen = new Set<RegExp>()
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    const expected = expectedErrors.find((pattern) => pattern.test(message.text()))
    if (expected) seen.add(expected)
    else problems.push(`console error: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.protocol === 'data:' || url.protocol === 'blob:') return
    if (!allowedHosts.has(url.host)) problems.push(`request to another host: ${request.url()}`)
  })
  page.on('websocket', (socket) => {
    if (!allowedHosts.has(new URL(socket.url()).host)) problems.push(`WebSocket to another host: ${socket.url()}`)
  })
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} for ${response.request().method()} ${response.url()}`)
  })
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`))
  // Checked when the test closes the tab (every test does, last).
  page.on('close', () => {
    t.same(problems, [], 'no console error, page error, failed request or request to another host')
    for (const pattern of expectedErrors) t.ok(seen.has(pattern), `the console shows the expected error ${pattern}`)
  })
  return page
}
