/**
 * Where everything is: the service's entry points, in one list that the start banner prints
 * (start-banner.ts) and the root URL answers (root.routes.ts), so that the two never disagree
 * (decisions §13, "Front doors").
 */

/** A link of the front door: its name in the root's JSON, and an aside when the banner shows it in parentheses. */
interface FrontDoorLink {
  name: string
  href: string
  aside?: string
}

/** One line of the banner: a label and its links, and a note after them. */
export interface FrontDoorRow {
  label: string
  links: FrontDoorLink[]
  note?: string
}

/** The entry points under `base` (PUBLIC_URL, or where the server is reached); no GraphiQL in production. */
export function frontDoorRows(base: string, nodeEnv: string): FrontDoorRow[] {
  const ws = base.replace(/^http/, 'ws')
  return [
    { label: 'REST API', links: [{ name: 'rest_api', href: `${base}/api/v1` }] },
    { label: 'Docs', links: [{ name: 'docs', href: `${base}/docs` }] },
    ...(nodeEnv === 'production' ? [] : [{ label: 'GraphiQL', links: [{ name: 'graphiql', href: `${base}/graphiql` }] }]),
    {
      label: 'GraphQL',
      links: [
        { name: 'graphql', href: `${base}/graphql` },
        { name: 'graphql_subscriptions', href: `${ws}/graphql`, aside: 'subscriptions' },
      ],
    },
    { label: 'MCP', links: [{ name: 'mcp', href: `${base}/mcp` }], note: 'agents: docs/agents.md' },
    {
      label: 'Contract',
      links: [
        { name: 'openapi', href: `${base}/api/v1/openapi.json` },
        { name: 'openapi_yaml', href: `${base}/api/v1/openapi.yaml` },
      ],
    },
    {
      label: 'Health',
      links: [
        { name: 'healthz', href: `${base}/healthz` },
        { name: 'readyz', href: `${base}/readyz` },
      ],
    },
  ]
}

/** A row as the banner prints it: its links, then its asides and note in parentheses. */
export function frontDoorLine(row: FrontDoorRow): string {
  const main = row.links.filter((link) => link.aside === undefined).map((link) => link.href)
  const asides = [
    ...row.links.flatMap((link) => (link.aside === undefined ? [] : [`${link.aside}: ${link.href}`])),
    ...(row.note === undefined ? [] : [row.note]),
  ]
  return asides.length === 0 ? main.join(', ') : `${main.join(', ')}  (${asides.join('; ')})`
}

/** Every link by its name, as the root URL answers them. */
export function frontDoorLinks(rows: FrontDoorRow[]): Record<string, string> {
  return Object.fromEntries(rows.flatMap((row) => row.links.map((link) => [link.name, link.href])))
}
