/**
 * The REST contract as the service serves it (/api/v1/openapi.json, /api/v1/openapi.yaml and
 * Swagger UI's /docs/json): openapi.yaml with one difference, its `servers` (decisions §12). The
 * file names a local server for readers and tools; the served copy names the server that answers,
 * `/api/v1` relative to wherever the document was fetched from, or `${PUBLIC_URL}/api/v1`, so that
 * Swagger UI's "Try it out" works on any host and port.
 */
import { parseDocument } from 'yaml'
import type { Contracts } from '../contract/contracts.ts'

export interface ServedContract {
  document: Record<string, unknown>
  json: string
  /** Built on first read: re-printing the YAML costs more than the rest of the contract's setup. */
  readonly yaml: string
}

export function servedServers(publicUrl: string | undefined): Array<{ url: string; description: string }> {
  return publicUrl
    ? [{ url: `${publicUrl}/api/v1`, description: 'This server (PUBLIC_URL).' }]
    : [{ url: '/api/v1', description: 'This server: the host and port this document was fetched from.' }]
}

export function servedContract(contracts: Contracts, publicUrl: string | undefined): ServedContract {
  const servers = servedServers(publicUrl)
  const document = { ...contracts.openApiDocument, servers }
  let yaml: string | undefined
  return {
    document,
    json: JSON.stringify(document),
    get yaml() {
      yaml ??= servedYaml(contracts.openApiYaml, servers)
      return yaml
    },
  }
}

/** The file's YAML with its comments, order and layout; only the `servers` node is replaced. */
function servedYaml(openApiYaml: string, servers: Array<{ url: string; description: string }>): string {
  const yaml = parseDocument(openApiYaml)
  yaml.set('servers', yaml.createNode(servers))
  return yaml.toString({ lineWidth: 0 })
}
