/**
 * `GET /`, where the start banner's first line (`Contract API listening on http://…`) leads
 * (decisions §13, "Front doors"): a browser tab is sent to the docs (302 to /docs), any other client
 * gets the banner's links as JSON (front-door.ts), with the contract and the docs also as `Link`
 * (RFC 8631). No credential, like /api/v1 and /healthz; outside the contract's paths.
 */
import type { FastifyInstance } from 'fastify'
import type { AppConfig } from '../../config.ts'
import { baseUrl } from '../../http/locations.ts'
import { asksForPage } from '../../http/page-requests.ts'
import { addVary } from '../../http/vary.ts'
import { frontDoorLinks, frontDoorRows } from './front-door.ts'

export async function rootRoutes(app: FastifyInstance, options: { config: AppConfig }) {
  const { publicUrl, nodeEnv } = options.config
  app.get('/', async (request, reply) => {
    // The answer depends on Accept: a shared cache keeps the page's redirect and the JSON apart.
    addVary(reply, 'Accept')
    reply.header('cache-control', 'public, max-age=300')
    if (asksForPage(request)) return reply.redirect('/docs', 302)
    const base = baseUrl(request, publicUrl)
    reply.header('link', `<${base}/api/v1/openapi.json>; rel="service-desc", <${base}/docs>; rel="service-doc"`)
    return { links: frontDoorLinks(frontDoorRows(base, nodeEnv)) }
  })
}
