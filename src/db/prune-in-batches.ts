/**
 * Pruning in small batches (decisions §17): every table that grows with traffic (the event log,
 * idempotency outcomes, webhook deliveries and their attempts) is pruned past its retention by
 * statements that each delete at most PRUNE_BATCH rows, in a transaction of their own: pruning a
 * day's worth of rows holds no lock for longer than one batch takes, and a writer never waits on it
 * for long.
 */

/** Rows one pruning statement deletes at most. */
export const PRUNE_BATCH = 1000

/**
 * Runs `deleteBatch` (which deletes at most `limit` rows and says how many) until a batch deletes
 * fewer than a batch, or `stopped()` says to stop (the app is closing): the rows deleted in all.
 */
export async function pruneInBatches(
  deleteBatch: (limit: number) => Promise<number>,
  stopped: () => boolean = () => false,
): Promise<number> {
  let total = 0
  for (;;) {
    const deleted = await deleteBatch(PRUNE_BATCH)
    total += deleted
    if (deleted < PRUNE_BATCH || stopped()) return total
  }
}
