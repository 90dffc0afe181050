/** Which persisted queries the endpoint runs: an allow-list (GRAPHQL_PERSISTED_ONLY) or any, by automatic persisted queries. */
import { readFileSync } from 'node:fs'
import mercurius, { type PersistedQueryProvider } from 'mercurius'
import { ApiError } from '../../errors.ts'

function loadManifest(path: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>
  } catch (error) {
    throw new Error(`GRAPHQL_PERSISTED_MANIFEST ${path} cannot be read: ${(error as Error).message}`)
  }
}

/**
 * GRAPHQL_PERSISTED_ONLY: every request must name, by its automatic-persisted-query hash, a
 * document of the manifest; a full query or an unlisted hash is PERSISTED_QUERY_NOT_ALLOWED.
 */
function allowListedQueries(manifest: Record<string, string>): PersistedQueryProvider {
  const notAllowed = () =>
    new ApiError('PERSISTED_QUERY_NOT_ALLOWED', "Only the persisted queries of this server's allow-list are executed.")
  return {
    isPersistedQuery: () => true,
    // The listed document is what runs, whatever text came with the hash: nothing to re-check.
    isPersistedQueryRetry: () => false,
    getHash: (body) => {
      const persisted = (body as { extensions?: { persistedQuery?: { version?: number; sha256Hash?: string } } }).extensions?.persistedQuery
      if (persisted?.version !== 1 || typeof persisted.sha256Hash !== 'string') throw notAllowed()
      return persisted.sha256Hash
    },
    getQueryFromHash: async (hash: string) => {
      const query = Object.hasOwn(manifest, hash) ? manifest[hash] : undefined
      if (query === undefined) throw notAllowed()
      return query
    },
  }
}

/** The allow-list read from `manifestPath` when `persistedOnly`, else automatic persisted queries (1024 kept). */
export function persistedQueryProvider(persistedOnly: boolean, manifestPath: string): PersistedQueryProvider {
  return persistedOnly ? allowListedQueries(loadManifest(manifestPath)) : mercurius.persistedQueryDefaults.automatic(1024)
}
