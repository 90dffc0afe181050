/*
 * The GraphiQL page of this service (served by src/graphql/http/graphiql.ts). Every script of the page
 * comes from the service itself, so its Content-Security-Policy can stay 'self'-only: React and
 * GraphiQL from their npm packages' browser builds, and this file for the rest.
 *
 * What it adds to a plain GraphiQL: the endpoint and subscription URL taken from the page's own
 * location (any host, any port, http or https), an Authorization header template and an example
 * query, and the schema loaded as soon as a token is in the headers (no "re-fetch schema" click).
 */
/* global React, ReactDOM, GraphiQL */
;(function () {
  'use strict'
  var root = document.getElementById('graphiql')
  var config = root.dataset
  // Radix dialogs insert a <style>; the bundle stamps it with this nonce, which the policy allows.
  if (config.styleNonce) window.__webpack_nonce__ = config.styleNonce

  var endpoint = new URL(config.endpoint, window.location.href)
  var subscriptionUrl = new URL(endpoint.href)
  subscriptionUrl.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:'
  // Subscriptions use graphql-ws; the headers (Authorization) travel in connection_init.
  var send = GraphiQL.createFetcher({ url: endpoint.href, subscriptionUrl: subscriptionUrl.href })

  var TOKEN = /^Bearer\s+[A-Za-z0-9_\-.~+/]+=*$/i

  function authorizationOf(headers) {
    if (!headers || typeof headers !== 'object') return undefined
    var value = headers.Authorization !== undefined ? headers.Authorization : headers.authorization
    return typeof value === 'string' ? value.trim() : undefined
  }

  function parseHeaders(text) {
    try {
      return JSON.parse(text || '{}')
    } catch (error) {
      return undefined
    }
  }

  // Without a token the service answers 401: say what to do instead of sending a request that
  // cannot succeed (and that the browser would log as a failed load).
  function fetcher(params, options) {
    if (!TOKEN.test(authorizationOf(options && options.headers) || '')) {
      return Promise.resolve({
        errors: [{ message: config.tokenHint }],
      })
    }
    return send(params, options)
  }

  var reactRoot = ReactDOM.createRoot(root)
  var currentAuthorization
  var pending

  function render() {
    reactRoot.render(
      React.createElement(GraphiQL, {
        // A new function makes GraphiQL introspect again, with the headers now in the editor.
        fetcher: function (params, options) {
          return fetcher(params, options)
        },
        defaultQuery: config.query,
        headers: config.headers,
        defaultHeaders: config.headers,
        defaultEditorToolsVisibility: 'headers',
        shouldPersistHeaders: false,
        onEditHeaders: onEditHeaders,
      }),
    )
  }

  // Once the headers hold a (new) token, load the schema with it.
  function onEditHeaders(text) {
    var authorization = authorizationOf(parseHeaders(text))
    if (!authorization || !TOKEN.test(authorization) || authorization === currentAuthorization) return
    currentAuthorization = authorization
    window.clearTimeout(pending)
    pending = window.setTimeout(render, 250)
  }

  render()
})()
