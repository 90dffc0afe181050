/**
 * The names public data is cached under: the GraphQL cache tags a cached result
 * with them (graphql/cache.ts) and a service's write invalidates by them, so that a service names
 * what changed without knowing which transport caches it.
 */
/** References a cached result carries; writes invalidate by the same names. */
export const cacheReferences = {
  articles: 'articles',
  article: (id: number | string) => `article:${id}`,
  products: 'products',
}
