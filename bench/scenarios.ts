/**
 * The bench scenarios (issue 13) and the servers each is measured on. A scenario builds the same
 * HTTP request for every server; only the path differs where a program mounts GraphQL elsewhere.
 * The peers (issue 25: PostGraphile 5, Platformatic DB 3) get the scenario written in their own
 * API, and say what they leave out of its work where their generated API cannot express it.
 */
import { randomUUID } from 'node:crypto'
import { PEER_ANSWERS, type PeerAnswer } from './peer-answers.ts'
import { type DataSetSize, ownerOfOrder, productSku } from './seed.ts'

/** Frameworks a team would pick instead of writing the service, run as their users run them. */
export type PeerName = 'postgraphile' | 'platformatic'
export type ServerName = 'service' | 'fastify' | 'apollo' | 'mercurius' | PeerName
/** Every server the service is compared with: the hand-written baselines and the peers. */
export type BaselineName = Exclude<ServerName, 'service'>

export const PEERS: readonly PeerName[] = ['postgraphile', 'platformatic']
export const isPeer = (name: ServerName): name is PeerName => PEERS.some((peer) => peer === name)

export const BASELINE_TITLES: Record<BaselineName, string> = {
  fastify: 'bare Fastify + pg',
  apollo: 'Apollo Server 5 + DataLoader + pg',
  mercurius: 'plain Mercurius + loaders + graphql-jit + pg',
  postgraphile: 'PostGraphile 5 (amber, RLS)',
  platformatic: 'Platformatic DB 3',
}

export type ScenarioId = 'get-order' | 'list-orders' | 'graphql-user-orders' | 'graphql-orders' | 'create-order'

export interface Tokens {
  owner: string
  admin: string
}

export interface BenchRequest {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  /** Headers that must be new on every request (the Idempotency-Key of a POST). */
  freshIdempotencyKey?: boolean
  graphql: boolean
}

export interface LessWork {
  /** A few words: "no items". */
  what: string
  why: string
}

/** A scenario as a peer serves it: its request, and its answer turned into the service's shape. */
export interface PeerVersion extends PeerAnswer {
  request: BenchRequest
  /** What the peer leaves out of the scenario's work and why, said in the results; undefined when nothing. */
  lessWork?: LessWork
}

export interface Scenario {
  id: ScenarioId
  title: string
  /** The servers the service is compared with: baselines first, then the peers (when they run). */
  baselines: BaselineName[]
  /** Those of them also measured at a fixed rate of half their maximum (the p99 target). */
  fixedRate: BaselineName[]
  request(server: ServerName): BenchRequest
  /** The scenario in the peers' own APIs, for the peers that serve it (none when the peers do not run). */
  peers: Partial<Record<PeerName, PeerVersion>>
  /** SQL statements per request the target allows, and why; undefined where it sets none. */
  statementBudget: { max: number | 'baseline'; reason: string } | undefined
}

/** The record the single-order scenarios read, and the user who owns it. */
export function benchSubjects(size: DataSetSize): { orderId: number; userId: number } {
  const orderId = Math.floor(size.orders / 2) + 42
  return { orderId, userId: ownerOfOrder(size, orderId) }
}

function graphqlPath(server: ServerName): string {
  // Apollo's standalone server answers on its root path.
  return server === 'apollo' ? '/' : '/graphql'
}

function graphql(server: ServerName, token: string, query: string): BenchRequest {
  return {
    method: 'POST',
    path: graphqlPath(server),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    graphql: true,
  }
}

/** Platformatic's REST and GraphQL cannot embed an order's items: where a scenario asks for them. */
const PLATFORMATIC_NO_ITEMS_REST: LessWork = {
  what: 'no items',
  why: 'its REST API cannot embed an order’s items in the same call (they are another request, GET /orders/{id}/orderItems)',
}
const PLATFORMATIC_NO_ITEMS_GRAPHQL: LessWork = {
  what: 'no items',
  why: 'its generated GraphQL schema has no relation from an order to its items',
}
const NEWEST_FIRST = '[{ field: createdAt, direction: DESC }, { field: id, direction: DESC }]'

/** The scenarios; `peers` adds the peers to the comparisons of the scenarios they serve. */
export function createScenarios(size: DataSetSize, tokens: Tokens, { peers = false }: { peers?: boolean } = {}): Scenario[] {
  const { orderId, userId } = benchSubjects(size)
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  const scenarios: Scenario[] = [
    {
      id: 'get-order',
      title: 'REST `GET /api/v1/orders/{id}` (owner token)',
      baselines: ['fastify'],
      fixedRate: ['fastify', 'platformatic'],
      request: () => ({ method: 'GET', path: `/api/v1/orders/${orderId}`, headers: bearer(tokens.owner), graphql: false }),
      peers: {
        platformatic: {
          request: { method: 'GET', path: `/orders/${orderId}`, headers: bearer(tokens.owner), graphql: false },
          lessWork: PLATFORMATIC_NO_ITEMS_REST,
          ...PEER_ANSWERS['get-order'].platformatic,
        },
      },
      statementBudget: { max: 'baseline', reason: 'as many round trips as the bare baseline' },
    },
    {
      id: 'list-orders',
      title: 'REST `GET /api/v1/orders?limit=20` (admin, envelope A with `page.total`)',
      baselines: ['fastify'],
      fixedRate: [],
      request: () => ({ method: 'GET', path: '/api/v1/orders?limit=20', headers: bearer(tokens.admin), graphql: false }),
      peers: {
        platformatic: {
          request: {
            method: 'GET',
            path: '/orders/?limit=20&orderby.createdAt=desc&orderby.id=desc&totalCount=true',
            headers: bearer(tokens.admin),
            graphql: false,
          },
          lessWork: {
            what: 'no items, no next-page cursor',
            why: `${PLATFORMATIC_NO_ITEMS_REST.why}; its list has no next-page link or cursor (its total is the X-Total-Count header)`,
          },
          ...PEER_ANSWERS['list-orders'].platformatic,
        },
      },
      statementBudget: { max: 'baseline', reason: 'as many round trips as the bare baseline' },
    },
    {
      id: 'graphql-user-orders',
      title: 'GraphQL `user(id) { name company { name } orders(last: 10) { id total items { sku qty } } }` (owner token)',
      baselines: ['apollo', 'mercurius'],
      fixedRate: ['apollo', 'mercurius', 'postgraphile'],
      request: (server) =>
        graphql(
          server,
          tokens.owner,
          `{ user(id: "${userId}") { name company { name } orders(last: 10) { id total items { sku qty } } } }`,
        ),
      peers: {
        postgraphile: {
          request: graphql(
            'postgraphile',
            tokens.owner,
            `{ userByRowId(rowId: ${userId}) { name companyByCompanyId { name }
                 ordersByUserId(last: 10, orderBy: [CREATED_AT_ASC, ROW_ID_ASC]) {
                   nodes { rowId total orderItemsByOrderId(orderBy: PRIMARY_KEY_ASC) { nodes { sku qty } } } } } }`,
          ),
          ...PEER_ANSWERS['graphql-user-orders'].postgraphile,
        },
        platformatic: {
          request: graphql(
            'platformatic',
            tokens.owner,
            `{ getUserById(id: ${userId}) { name company { name } orders(limit: 10, orderBy: ${NEWEST_FIRST}) { id total } } }`,
          ),
          lessWork: PLATFORMATIC_NO_ITEMS_GRAPHQL,
          ...PEER_ANSWERS['graphql-user-orders'].platformatic,
        },
      },
      statementBudget: { max: 4, reason: 'one per nesting level: user, company, orders, items' },
    },
    {
      id: 'graphql-orders',
      title: 'GraphQL `orders(first: 50) { id user { name company { name } } items { sku } }` (admin)',
      baselines: ['apollo', 'mercurius'],
      fixedRate: [],
      request: (server) => graphql(server, tokens.admin, '{ orders(first: 50) { id user { name company { name } } items { sku } } }'),
      peers: {
        postgraphile: {
          request: graphql(
            'postgraphile',
            tokens.admin,
            `{ allOrders(first: 50, orderBy: [CREATED_AT_DESC, ROW_ID_DESC]) {
                 nodes { rowId userByUserId { name companyByCompanyId { name } } orderItemsByOrderId(orderBy: PRIMARY_KEY_ASC) { nodes { sku } } } } }`,
          ),
          ...PEER_ANSWERS['graphql-orders'].postgraphile,
        },
        platformatic: {
          request: graphql(
            'platformatic',
            tokens.admin,
            `{ orders(limit: 50, orderBy: ${NEWEST_FIRST}) { id user { name company { name } } } }`,
          ),
          lessWork: PLATFORMATIC_NO_ITEMS_GRAPHQL,
          ...PEER_ANSWERS['graphql-orders'].platformatic,
        },
      },
      statementBudget: { max: 4, reason: 'one per nesting level: orders, users, companies, items' },
    },
    {
      id: 'create-order',
      title: 'REST `POST /api/v1/orders` (owner token, a fresh Idempotency-Key per request, 3 items)',
      baselines: ['fastify'],
      fixedRate: [],
      request: () => ({
        method: 'POST',
        path: '/api/v1/orders',
        headers: { ...bearer(tokens.owner), 'content-type': 'application/json' },
        body: JSON.stringify({
          items: [
            { sku: productSku(1), qty: 1 },
            { sku: productSku(2), qty: 2 },
            { sku: productSku(3), qty: 1 },
          ],
        }),
        freshIdempotencyKey: true,
        graphql: false,
      }),
      peers: {},
      statementBudget: undefined,
    },
  ]
  // The peers join the comparisons after the baselines, where they serve the scenario.
  return scenarios.map((scenario) => {
    const serving = peers ? PEERS.filter((peer) => scenario.peers[peer] !== undefined) : []
    const compared = [...scenario.baselines, ...serving]
    const versions: Scenario['peers'] = Object.fromEntries(serving.map((peer) => [peer, scenario.peers[peer]]))
    return {
      ...scenario,
      baselines: compared,
      fixedRate: scenario.fixedRate.filter((name) => compared.includes(name)),
      peers: versions,
      request: (server) => {
        if (!isPeer(server)) return scenario.request(server)
        const version = versions[server]
        if (!version) throw new Error(`${server} does not serve ${scenario.id}`)
        return version.request
      },
    }
  })
}

export const newIdempotencyKey = (): string => randomUUID()
