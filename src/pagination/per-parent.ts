/**
 * The service and loader halves of "the first (or last) N records of each parent" (the SQL half
 * is src/db/rows-per-parent.ts): grouping the batched rows by parent, and batching loader queries
 * that ask for different N.
 */

/** Each record under its parent, every asked-for parent present (empty when it has none), oldest first. */
export function groupOldestFirst<Item extends { id: number; created_at: string }>(
  parentIds: readonly number[],
  items: readonly Item[],
  parentOf: (item: Item) => number,
): Map<number, Item[]> {
  const byParent = new Map<number, Item[]>(parentIds.map((id) => [id, []]))
  for (const item of items) byParent.get(parentOf(item))?.push(item)
  for (const list of byParent.values()) list.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id - b.id)
  return byParent
}

/**
 * The queries of one loader batch may ask for different sizes (`first: 2` on one article, `first: 5`
 * on another): one batched lookup per distinct size, in turn, each for its distinct parents.
 * Returns where to find a parent's result for a size.
 */
export async function lookupPerSize<Result>(
  requests: ReadonlyArray<{ parentId: number; size: number }>,
  lookup: (parentIds: number[], size: number) => Promise<Map<number, Result>>,
): Promise<(parentId: number, size: number) => Result | undefined> {
  const parentsBySize = new Map<number, Set<number>>()
  for (const { parentId, size } of requests) {
    const parents = parentsBySize.get(size) ?? new Set<number>()
    parentsBySize.set(size, parents.add(parentId))
  }
  const results = new Map<number, Map<number, Result>>()
  for (const [size, parents] of parentsBySize) results.set(size, await lookup([...parents], size))
  return (parentId, size) => results.get(size)?.get(parentId)
}
