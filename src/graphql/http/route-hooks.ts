/**
 * Hooks of the GraphQL endpoint's own routes (GET, the HEAD Fastify adds for it, and POST on the
 * endpoint's path), attached to those routes rather than to the app: a REST request runs none of
 * them, and a GraphQL request does not ask each whether it is one (per-request
 * work designed per route).
 *
 * They run where an app-wide hook of this plugin ran before them: the app-wide hooks of the
 * plugins registered earlier (auth, rate limit, caching, …) run first, as they did. An onRequest
 * hook goes before the route's own (Mercurius' CSRF check), as the app-wide one did.
 */
import type {
  FastifyInstance,
  onRequestHookHandler,
  onSendHookHandler,
  preHandlerHookHandler,
  preValidationHookHandler,
  RouteOptions,
} from 'fastify'

export interface GraphqlRouteHooks {
  onRequest?: onRequestHookHandler
  preValidation?: preValidationHookHandler
  preHandler?: preHandlerHookHandler
  onSend?: onSendHookHandler
}

/** A route's own hooks of one kind (one, several or none) with `added` last, or first. */
function joined<Hook>(own: Hook | Hook[] | undefined, added: Hook | undefined, first = false): Hook | Hook[] | undefined {
  if (added === undefined) return own
  const list = own === undefined ? [] : Array.isArray(own) ? own : [own]
  return first ? [added, ...list] : [...list, added]
}

const methodsOf = (route: RouteOptions): string[] => [route.method].flat()

/**
 * Adds `hooks` to the routes on `path` whose methods include one of `methods` (all three by
 * default). Call before Mercurius registers its routes.
 */
export function addGraphqlRouteHooks(
  app: FastifyInstance,
  path: string,
  hooks: GraphqlRouteHooks,
  methods: ReadonlyArray<'GET' | 'HEAD' | 'POST'> = ['GET', 'HEAD', 'POST'],
): void {
  app.addHook('onRoute', (route) => {
    if (route.url !== path || !methodsOf(route).some((method) => methods.some((wanted) => wanted === method))) return
    route.onRequest = joined(route.onRequest, hooks.onRequest, true)
    route.preValidation = joined(route.preValidation, hooks.preValidation)
    route.preHandler = joined(route.preHandler, hooks.preHandler)
    route.onSend = joined(route.onSend, hooks.onSend)
  })
}
